import CacheLog

/// `version --format json`: the tool's version and the database format it reads and writes.
struct VersionReport: Encodable {
    let version = CacheLog.version
    let databaseFormat = CacheLog.databaseFormat

    /// `cachelog --version` and `cachelog version`: one line, from one place.
    static var text: String { "cachelog \(CacheLog.version) (database format \(CacheLog.databaseFormat))" }
}
