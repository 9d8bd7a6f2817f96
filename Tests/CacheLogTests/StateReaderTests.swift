import CLMDB
import Foundation
import TestSupport
import Testing
@testable import CacheLog

/// The one state reader: what each way of reading a key's entry answers for a whole row, a row
/// naming another key's put, and a row that does not decode.
@Suite("StateReader: one API for the live state")
struct StateReaderTests {
    /// A log with `films` (max age 1 hour) then `genres` (max age 2 hours) live: seqs 1 and 2.
    private func filmsAndGenres(_ dir: TemporaryDirectory) async throws -> EventLog {
        let log = try makeLog(dir)
        try await log.append(.put(key: "films", payload: payload("[1]"), timestamp: Date(timeIntervalSince1970: 1_000), maxAge: 3600))
        try await log.append(.put(key: "genres", payload: payload("[2]"), timestamp: Date(timeIntervalSince1970: 2_000), maxAge: 7200))
        return log
    }

    private func entry(_ log: EventLog, _ key: String, _ read: StateReader.EntryRead) throws -> LogState.Entry? {
        try entry(log, key, read, onDamaged: { _ in })
    }

    /// The entry read as `read`, with the keys the read names as damaged.
    private func entry(_ log: EventLog, _ key: String, _ read: StateReader.EntryRead, onDamaged: ([String]) -> Void) throws -> LogState.Entry? {
        try log.environment.read { txn in try log.tables.state.entry(txn, key: Array(key.utf8), read, onDamaged: onDamaged) }
    }

    /// Every entry, with its put's policy, and the keys the read names as damaged.
    private func entries(_ log: EventLog, onDamaged: ([String]) -> Void) throws -> [LogState.Entry] {
        try log.environment.read { txn in try log.tables.state.entries(txn, checked: true, onDamaged: onDamaged) }
    }

    private func rows(_ log: EventLog) throws -> (rows: [StateFold.Row], malformed: [[UInt8]]) {
        try log.environment.read { txn in try log.tables.state.rows(txn) }
    }

    /// Points the state row of `films` at `genres`'s put (seq 2): a flipped bit in its seq.
    private func pointFilmsAtGenres(_ log: EventLog) throws {
        try RawLMDB.write(log) { txn, dbs in
            let wrong = StateRowCodec.encode(LogState.Entry(key: "films", seq: 2, timestamp: Date(timeIntervalSince1970: 1_000), bytes: 3))
            #expect(RawLMDB.put(txn, dbs.state, Array("films".utf8), wrong) == MDB_SUCCESS)
        }
    }

    @Test func entry_ofAWholeRow_isTheRow_andCheckedAddsItsPutsPolicy() async throws {
        let dir = try TemporaryDirectory()
        let log = try await filmsAndGenres(dir)
        let row = try #require(try entry(log, "films", .row))
        #expect(row.seq == 1 && row.maxAge == nil)
        #expect(try entry(log, "films", .checked)?.maxAge == 3600)
        #expect(try entry(log, "films", .judgedForASave)?.maxAge == 3600)
        #expect(try entry(log, "films", .log)?.seq == 1)
        #expect(try entry(log, "absent", .checked) == nil)
    }

    @Test func entry_ofARowNamingAnotherPut_isBelievedOnlyAsStored() async throws {
        let dir = try TemporaryDirectory()
        let log = try await filmsAndGenres(dir)
        try pointFilmsAtGenres(log)
        // As stored: what validation reads, and deletes when it cannot be read back.
        #expect(try entry(log, "films", .row)?.seq == 2)
        // A reader judges the key by its own put, from the log, with that put's policy.
        let checked = try #require(try entry(log, "films", .checked))
        #expect(checked.seq == 1 && checked.maxAge == 3600)
        #expect(try entry(log, "films", .log)?.seq == 1)
        // A save's condition does not fold inside the write: the row counts as no entry.
        #expect(try entry(log, "films", .judgedForASave) == nil)
    }

    @Test func entry_ofARowThatDoesNotDecode_isTheFold_andNamesTheKey() async throws {
        let dir = try TemporaryDirectory()
        let log = try await filmsAndGenres(dir)
        try RawLMDB.write(log) { txn, dbs in
            #expect(RawLMDB.put(txn, dbs.state, Array("films".utf8), [0xFF, 0x00]) == MDB_SUCCESS)
        }
        var named: [String] = []
        let row = try entry(log, "films", .row, onDamaged: { named += $0 })
        #expect(row?.seq == 1)
        #expect(named == ["films"])
        #expect(try entry(log, "films", .checked)?.maxAge == 3600)
    }

    @Test func entries_keepTheRowsThatDecode_andFoldOnlyTheDamaged_inKeyOrder() async throws {
        let dir = try TemporaryDirectory()
        let log = try await filmsAndGenres(dir)
        try RawLMDB.write(log) { txn, dbs in
            #expect(RawLMDB.put(txn, dbs.state, Array("genres".utf8), [0xFF]) == MDB_SUCCESS)
        }
        var named: [String] = []
        let entries = try entries(log, onDamaged: { named += $0 })
        #expect(entries.map(\.key) == ["films", "genres"])
        #expect(entries.map(\.maxAge) == [3600, 7200])
        #expect(named == ["genres"])
        let rows = try rows(log)
        #expect(rows.rows.map(\.entry.key) == ["films"])
        #expect(rows.malformed == [Array("genres".utf8)])
    }

    @Test func entries_answerAMisdirectedRowFromTheLog_andKeepARowNamingNoCache() async throws {
        let dir = try TemporaryDirectory()
        let log = try await filmsAndGenres(dir)
        try pointFilmsAtGenres(log)
        try RawLMDB.write(log) { txn, dbs in
            let ghost = StateRowCodec.encode(LogState.Entry(key: "ghost", seq: 99, timestamp: Date(timeIntervalSince1970: 3_000), bytes: 1))
            #expect(RawLMDB.put(txn, dbs.state, Array("ghost".utf8), ghost) == MDB_SUCCESS)
        }
        var named: [String] = []
        let entries = try entries(log, onDamaged: { named += $0 })
        #expect(entries.map(\.key) == ["films", "genres", "ghost"])
        #expect(entries.map(\.seq) == [1, 2, 99])
        #expect(entries.map(\.maxAge) == [3600, 7200, nil])
        #expect(named == ["films"])
        // The public face agrees with the reader, key for key.
        #expect(try log.state().entries.map(\.seq) == [1, 2, 99])
        #expect(try log.entry("films")?.seq == 1)
    }
}
