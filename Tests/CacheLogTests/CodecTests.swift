import CLMDB
import Foundation
import TestSupport
import Testing
@testable import CacheLog

@Suite("Record codec and corruption")
struct CodecTests {
    @Test func record_roundTripsEveryField() throws {
        let prepared = try EventCodec.prepare(.put(key: "image:https://example.com/a.png", payload: payload(String(repeating: "ab", count: 500)), timestamp: Date(timeIntervalSince1970: 12.5)), maxKeySize: 511)
        let record = EventCodec.encode(prepared, recordedAt: Date(timeIntervalSince1970: 99.75).stamp)
        try record.withUnsafeBytes { raw in
            let header = try EventCodec.decodeHeader(raw, seq: 7)
            let event = try EventCodec.recordedEvent(header, in: raw, seq: 7) { try EventCodec.payload(header, in: raw, seq: 7) }
            #expect(event.key == "image:https://example.com/a.png")
            #expect(event.recordedAt == Date(timeIntervalSince1970: 99.75))
            #expect(event.timestamp == Date(timeIntervalSince1970: 12.5))
            #expect(event.payload == payload(String(repeating: "ab", count: 500)))
            #expect(event.payloadBytes == 1000)
            #expect(event.storedBytes == record.count)
            #expect(header.body.count < 100, "a repetitive payload compresses")
        }
    }

    @Test func put_roundTripsItsRecordedMaxAgeAndMetadata_afterTheBody() throws {
        let metadata = ["contract": "films", "etag": "\"v1\"", "é": ""]
        let prepared = try EventCodec.prepare(
            .put(key: "films", payload: payload("[1]"), timestamp: Date(timeIntervalSince1970: 5), maxAge: 604_800, metadata: metadata),
            maxKeySize: 511)
        let record = EventCodec.encode(prepared, recordedAt: 6)
        try record.withUnsafeBytes { raw in
            let header = try EventCodec.decodeHeader(raw, seq: 3)
            #expect(header.flags == EventCodec.compressedFlag | EventCodec.maxAgeFlag | EventCodec.metadataFlag)
            let event = try EventCodec.recordedEvent(header, in: raw, seq: 3) { try EventCodec.payload(header, in: raw, seq: 3) }
            #expect(event.maxAge == 604_800)
            #expect(event.metadata == metadata)
            #expect(event.payload == payload("[1]"))
            // The body ends where it always did; the metadata sits between it and the checksum.
            #expect(header.body.upperBound + 2 == header.metadata.lowerBound && header.metadata.upperBound == raw.count - 4)
        }
    }

    @Test func put_withoutAPolicy_recordsNone_asPutsAlwaysDid() throws {
        let prepared = try EventCodec.prepare(.put(key: "films", payload: payload("[1]"), timestamp: Date()), maxKeySize: 511)
        let record = EventCodec.encode(prepared, recordedAt: 6)
        try record.withUnsafeBytes { raw in
            let header = try EventCodec.decodeHeader(raw, seq: 3)
            #expect(header.flags == EventCodec.compressedFlag)
            #expect(raw.count == EventCodec.headerSize + 5 + header.body.count + 4)
            let event = try EventCodec.recordedEvent(header, in: raw, seq: 3, payload: nil)
            #expect(event.maxAge == nil && event.metadata.isEmpty)
        }
    }

    @Test(arguments: [
        ["": "a name of no bytes"],
        [String(repeating: "n", count: 256): "a name over 255 bytes"],
        ["name": String(repeating: "v", count: 65_536)],
    ])
    func put_withMetadataThatDoesNotFitItsFraming_isRefusedBeforeAnythingIsWritten(metadata: [String: String]) {
        #expect(throws: CacheLogError.self) {
            _ = try EventCodec.prepare(.put(key: "k", payload: Data(), timestamp: Date(), metadata: metadata), maxKeySize: 511)
        }
    }

    @Test func aKeyThatIsNotUTF8_isCorruptFraming_evenWithAValidChecksum() throws {
        let prepared = try EventCodec.prepare(.put(key: "films", payload: payload("[1]"), timestamp: Date()), maxKeySize: 511)
        var record = EventCodec.encode(prepared, recordedAt: 1)
        record[EventCodec.headerSize + 1] = 0xFF
        record.replaceSubrange((record.count - 4)..., with: withUnsafeBytes(of: record.dropLast(4).withUnsafeBytes { Zlib.crc32($0) }.bigEndian) { Array($0) })
        #expect(throws: CacheLogError.corruptRecord(seq: 9, detail: "key is not UTF-8")) {
            _ = try record.withUnsafeBytes { try EventCodec.decodeHeader($0, seq: 9, verifyChecksum: true) }
        }
    }

    @Test func body_isZlibFormatNotRawDeflate() throws {
        let prepared = try EventCodec.prepare(.put(key: "k", payload: payload("hello"), timestamp: Date()), maxKeySize: 511)
        // RFC 1950: CMF 0x78 (deflate, 32K window), and CMF*256+FLG divisible by 31.
        #expect(prepared.body.first == 0x78)
        #expect((Int(prepared.body[0]) * 256 + Int(prepared.body[1])) % 31 == 0)
    }

    @Test func everyFlippedByte_isReportedAsCorrupt_neverDecoded() throws {
        let prepared = try EventCodec.prepare(.put(key: "films", payload: payload("[{\"id\":1}]"), timestamp: Date()), maxKeySize: 511)
        let record = EventCodec.encode(prepared, recordedAt: 1)
        for index in record.indices {
            var bad = record
            bad[index] ^= 0x01
            bad.withUnsafeBytes { raw in
                _ = #expect(throws: CacheLogError.self) { _ = try EventCodec.decodeHeader(raw, seq: 42) }
            }
        }
    }

    @Test func truncatedRecord_isCorruptAtItsSeq() throws {
        let prepared = try EventCodec.prepare(.delete(key: "films", reason: .explicit), maxKeySize: 511)
        let record = Array(EventCodec.encode(prepared, recordedAt: 1).dropLast(3))
        record.withUnsafeBytes { raw in
            _ = #expect {
                _ = try EventCodec.decodeHeader(raw, seq: 9)
            } throws: { error in
                guard case CacheLogError.corruptRecord(let seq, _) = error else { return false }
                return seq == 9
            }
        }
    }

    @Test func retrieve_reportsAFlippedStoredByteAsCorruptRecordAtItsSeq() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(.put(key: "films", payload: payload("[1,2,3]"), timestamp: Date()))
        try await log.append([.delete(key: "films", reason: .replaced), .put(key: "films", payload: payload("[4,5,6]"), timestamp: Date())])
        try RawLMDB.flipByte(of: 3, in: log)

        #expect {
            _ = try log.retrieve("films")
        } throws: { error in
            (error as? CacheLogError).map { "\($0)" }?.hasPrefix("corrupt record at seq 3") ?? false
        }
        let items = try log.events()
        #expect(items.count == 3)
        guard case .corrupt(let seq, _) = items[2] else { Issue.record("expected a corrupt item"); return }
        #expect(seq == 3)
    }

    @Test func recordWithAValidChecksumButABodyThatDoesNotInflate_isCorruptOnRetrieve() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        try await log.append(.put(key: "films", payload: payload("[1,2,3]"), timestamp: Date()))
        try plantUninflatableBody(seq: 1, in: log)
        #expect(throws: CacheLogError.self) { _ = try log.retrieve("films") }
        let report = try log.verify()
        #expect(report.problems.map(\.seq) == [1])
    }
}

/// Replaces the body of record `seq` with bytes that are not a zlib stream, and re-seals the
/// checksum, so only an inflate can tell.
func plantUninflatableBody(seq: UInt64, in log: EventLog) throws {
    try RawLMDB.write(log) { txn, dbs in
        var record = try #require(RawLMDB.get(txn, dbs.events, SeqKey.bytes(seq)))
        let header = try record.withUnsafeBytes { try EventCodec.decodeHeader($0, seq: seq) }
        for index in header.body { record[index] = 0xAB }
        let crc = record.dropLast(4).withUnsafeBytes { Zlib.crc32(UnsafeRawBufferPointer($0)) }
        withUnsafeBytes(of: crc.bigEndian) { bytes in
            for (offset, byte) in bytes.enumerated() { record[record.count - 4 + offset] = byte }
        }
        #expect(RawLMDB.put(txn, dbs.events, SeqKey.bytes(seq), record) == MDB_SUCCESS)
    }
}
