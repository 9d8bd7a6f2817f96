import CLMDB
import CacheLog
import FeedCache
import FeedCacheLog
import Foundation
import TestSupport
import Testing
@testable import CacheLog

/// Issue 6, item 6 (engine level): a database of a newer format is refused for writing with a
/// clear message, and the FeedCache stack can still read it.
@Suite("Format versions")
struct FormatVersionTests {
    @Test func newerFormat_throughTheFeedCacheStore_loadWorksReadOnly_andSaveFailsWithATypedError() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path()
        let clock = TestClock()
        let newerFormat = Environment.formatVersion + 1
        let refused = CacheLogError.newerFormat(found: newerFormat, supported: Environment.formatVersion)
        let saved = [Item(id: 1, text: "one"), Item(id: 2, text: "two")]
        do {
            // One clock for the log and the loader: a save stamped later than its recording
            // would be judged from the recording.
            let log = try EventLog(path: db, options: .init(clock: clock.function))
            try await feedLoader(log, clock: clock.function).save(saved)
            // A future CacheLog stamped the database with the next format.
            try RawLMDB.write(log) { txn, dbs in
                let newer = withUnsafeBytes(of: newerFormat.bigEndian) { Array($0) }
                #expect(RawLMDB.put(txn, dbs.meta, MetaKey.format, newer) == MDB_SUCCESS)
            }
        }
        try await waitUntilClosed(db)
        let untouched = try Data(contentsOf: URL(fileURLWithPath: db + "/data.mdb"))

        // Refused for writing, with a message that says why and what to do.
        #expect(throws: refused) { _ = try EventLog(path: db) }
        #expect(refused.description.contains("newer"))
        #expect(refused.description.contains("read-only"))
        try await waitUntilClosed(db)

        // Readable through the store, read-only.
        let log = try EventLog(path: db, options: .init(readOnly: true, clock: clock.function))
        let loader = feedLoader(log, clock: clock.function)
        #expect(try await loader.load() == saved)
        #expect(try await loader.loadFeed().items == saved)

        // Every write through the use cases fails with the typed error and changes nothing.
        await #expect(throws: CacheLogError.readOnly) { try await loader.save([Item(id: 3, text: "three")]) }
        clock.advance(8 * 86_400)
        await #expect(throws: CacheLogError.readOnly) { try await loader.validateCache() }
        await #expect(throws: CacheLogError.readOnly) { try await CacheLogFeedStore(log: log, key: "films").deleteCachedFeed() }
        #expect(try log.lastSeq() == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: db + "/data.mdb")) == untouched)
    }
}
