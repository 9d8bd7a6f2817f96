/// The exit codes, as `--help` and the README document them.
enum Exit {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    /// Neither the remote nor the cache had usable data.
    static let noUsableData: Int32 = 3
    /// Bad command line (ArgumentParser's validation errors use the same code).
    static let usage: Int32 = 64
}
