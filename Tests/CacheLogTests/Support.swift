import CLMDB
import Foundation
import TestSupport
import Testing
@testable import CacheLog

func makeLog(_ directory: TemporaryDirectory, clock: TestClock? = nil, mapSize: Int = 64 << 20,
             checkpointInterval: Int = 4096, readOnly: Bool = false, name: String = "db") throws -> EventLog {
    var now: @Sendable () -> Date = { Date() }
    if let clock { now = clock.function }
    let options = EventLog.Options(
        readOnly: readOnly, initialMapSize: mapSize, checkpointInterval: checkpointInterval, clock: now)
    return try EventLog(path: directory.path(name), options: options)
}

func payload(_ text: String) -> Data { Data(text.utf8) }

func events(_ log: EventLog, _ query: EventQuery = EventQuery()) throws -> [RecordedEvent] {
    try log.events(query).compactMap { item in
        if case .event(let event) = item { return event }
        return nil
    }
}

