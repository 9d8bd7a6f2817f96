/// The retention pass a command's writes made due, run before the tool ends: the log runs such
/// passes in the background, which a process that ends right after its save would cut short,
/// leaving every pass to the next process. A pass that fails changes nothing the command did: one
/// line says so, and the exit status stays the command's.
enum DueRetention {
    static func apply(_ pass: () async throws -> Void) async {
        do {
            try await pass()
        } catch {
            Terminal.message("cachelog: warning: the retention pass did not run: \(error)")
        }
    }
}
