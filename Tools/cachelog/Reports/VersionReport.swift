import CacheLog

/// `version --format json`: the tool's version and the database format it reads and writes.
struct VersionReport: Encodable {
    let version = EventLog.version
    let databaseFormat = EventLog.databaseFormat

    /// `cachelog --version` and `cachelog version`: one line, from one place.
    static var text: String { "cachelog \(EventLog.version) (database format \(EventLog.databaseFormat))" }
}
