import Foundation

/// A directory of its own for each test (Swift Testing runs tests in parallel), removed at the end.
public final class TemporaryDirectory: @unchecked Sendable {
    public let url: URL

    public init(prefix: String = "cachelog-tests") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// A path inside the directory, for a database that does not exist yet.
    public func path(_ name: String = "db") -> String { url.appendingPathComponent(name).path }
}
