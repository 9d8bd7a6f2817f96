import Foundation
import Logging

/// A swift-log handler that keeps messages in memory.
public struct CapturingLogHandler: LogHandler {
    public final class Store: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [(Logger.Level, String)] = []

        public init() {}

        public func append(_ level: Logger.Level, _ message: String) {
            lock.lock(); defer { lock.unlock() }
            entries.append((level, message))
        }

        public var messages: [(level: Logger.Level, message: String)] {
            lock.lock(); defer { lock.unlock() }
            return entries.map { (level: $0.0, message: $0.1) }
        }
    }

    let store: Store

    public init(store: Store) {
        self.store = store
    }
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        store.append(event.level, event.message.description)
    }
}

public func capturingLogger() -> (Logger, CapturingLogHandler.Store) {
    let store = CapturingLogHandler.Store()
    let logger = Logger(label: "test") { _ in CapturingLogHandler(store: store) }
    return (logger, store)
}
