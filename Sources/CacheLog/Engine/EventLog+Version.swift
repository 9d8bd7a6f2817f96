extension EventLog {
    /// This release of the package, as `cachelog --version` prints it. The one place it is written.
    public static let version = "0.10.0"

    /// The database format this release writes (Format.md; ``CacheLogError/newerFormat(found:supported:)``).
    public static var databaseFormat: UInt32 { Environment.formatVersion }
}
