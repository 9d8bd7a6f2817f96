import Foundation

/// Runs this same executable as a child process, as a person would type the command, and shows
/// the command line first. The children share stdout and stderr with the demo.
struct DemoRunner {
    let executable: URL
    let db: String

    init(db: String) throws {
        guard let path = Bundle.main.executablePath else { throw CLIFailure("cannot find the cachelog executable") }
        executable = URL(fileURLWithPath: path)
        self.db = db
    }

    /// Unbuffered, so the demo's lines and its children's output arrive in order.
    func say(_ text: String) {
        let out = StandardOutput()
        out.line(text)
        out.flush()
    }

    func step(_ number: Int, _ text: String) {
        say("\n\(Terminal.color("\(number). \(text)", "1"))")
    }

    func run(_ arguments: [String], expecting expected: Int32 = 0) throws {
        let shown = arguments.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
        say("$ cachelog \(shown)")
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--db", db] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "CACHELOG_NOW")
        process.environment = environment
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 { say("(exit \(process.terminationStatus))") }
        guard process.terminationStatus == expected else {
            throw CLIFailure("demo step 'cachelog \(shown)' exited \(process.terminationStatus), expected \(expected)")
        }
    }
}
