import Foundation
import TestSupport
import Testing

/// Damage planted in a database the way a broken disk or an outside program would, and raw reads
/// that check the tool's claims: through Python's `lmdb` module (installed by Tools/setup), an
/// LMDB reader independent of the code under test. Run only while no `cachelog` has the database open.
struct Planting {
    let db: String

    /// Runs `script` with `env` and the four tables (`events`, `state`, `checkpoints`, `meta`)
    /// open, `seq(n)` giving an 8-byte big-endian key, inside one write transaction `txn`.
    /// Returns what it printed.
    @discardableResult
    func python(_ script: String) async throws -> String {
        let prelude = """
            import lmdb, struct, sys, zlib
            env = lmdb.open(sys.argv[1], max_dbs=8, subdir=True)
            events, state, checkpoints, meta = (env.open_db(name.encode(), create=False) for name in ("events", "state", "checkpoints", "meta"))
            def seq(n): return struct.pack(">Q", n)
            with env.begin(write=True) as txn:

            """
        let body = script.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n")
        let python = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/python3"), ["-c", prelude + body + "\nenv.close()\n", db], timeout: .seconds(30))
        try #require(python.exited && python.status == 0, "python failed (is python3-lmdb installed? Tools/setup): \(python.stderrText)")
        return python.stdoutText
    }

    /// Flips every bit of one byte of record `seq`, `offsetFromEnd` bytes before its end (1 to 4:
    /// its CRC; more: its body, key or header).
    func flipByte(ofRecord seq: UInt64, offsetFromEnd: Int) async throws {
        try await python("""
            record = bytearray(txn.get(seq(\(seq)), db=events))
            record[len(record) - \(offsetFromEnd)] ^= 0xFF
            txn.put(seq(\(seq)), bytes(record), db=events)
            """)
    }

    func deleteRecord(_ seq: UInt64) async throws {
        try await python("assert txn.delete(seq(\(seq)), db=events)")
    }

    /// Overwrites the `state` row of `key` with bytes no row can hold.
    func damageStateRow(_ key: String) async throws {
        try await python("txn.put(\(pythonBytes(key)), b'not a state row', db=state)")
    }

    /// Flips a byte in the middle of the checkpoint at `seq`.
    func damageCheckpoint(_ seq: UInt64) async throws {
        try await python("""
            raw = bytearray(txn.get(seq(\(seq)), db=checkpoints))
            raw[len(raw) // 2] ^= 0xFF
            txn.put(seq(\(seq)), bytes(raw), db=checkpoints)
            """)
    }

    /// Overwrites the `meta` counter `name` with 8 bytes (`lastSeq`, `checkpointSeq`, `baseSeq`:
    /// big-endian u64; `lastRecordedAt`: the bits of an f64).
    func setMeta(_ name: String, _ value: UInt64) async throws {
        try await python("txn.put(b'\(name)', struct.pack('>Q', \(value)), db=meta)")
    }

    /// The seqs of the stored checkpoints.
    func checkpointSeqs() async throws -> [UInt64] {
        try await python("""
            for key, _ in txn.cursor(db=checkpoints):
                print(struct.unpack(">Q", key)[0])
            """).split(separator: "\n").compactMap { UInt64($0) }
    }

    /// The seq whose bytes the put at `seq` reads: its own, or the one its reference names.
    func payloadSeq(ofPut seq: UInt64) async throws -> UInt64? {
        UInt64(try await python("""
            record = txn.get(seq(\(seq)), db=events)
            flags = record[2]
            klen, = struct.unpack(">H", record[28:30])
            print(struct.unpack(">Q", record[38 + klen:46 + klen])[0] if flags & 2 else \(seq))
            """).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Appends a put of `payload` under `key` the way the engine would (record, `state` row,
    /// `meta` counters, as Format.md lays them out), recording `maxAge` and `contract`: a save no
    /// `cachelog` command can make, such as a payload that does not follow the contract it names.
    /// `timestamp` is in seconds since 1970; the record stores it as seconds since 2001.
    /// `builtIn`: the put carries the mark of the package's own contracts (metadata `contract-by`),
    /// as `cachelog load --contract` writes it; without it the contract reads as an app's.
    func appendPut(key: String, payload: String, timestamp: Double, maxAge: Double, contract: String, builtIn: Bool = true) async throws {
        try await python("""
            key, payload, contract = \(pythonBytes(key)), \(pythonBytes(payload)), \(pythonBytes(contract))
            last = struct.unpack(">Q", txn.get(b"lastSeq", db=meta))[0]
            tag, at = struct.unpack(">Bd", txn.get(b"lastRecordedAt", db=meta))
            timestamp = \(timestamp) - 978307200.0
            body = zlib.compress(payload)
            entries = bytes([8]) + b"contract" + struct.pack(">H", len(contract)) + contract
            if \(builtIn ? "True" : "False"):
                entries += bytes([11]) + b"contract-by" + struct.pack(">H", 8) + b"cachelog"
            metadata = struct.pack(">H", len(entries)) + entries
            record = struct.pack(">BBBBdddHII", 3, 1, 1 | 4 | 8, 0, at, timestamp, \(maxAge), len(key), len(payload), len(body))
            record += key + body + metadata
            record += struct.pack(">I", zlib.crc32(record))
            txn.put(seq(last + 1), record, db=events)
            txn.put(key, struct.pack(">BQdIQ", 2, last + 1, timestamp, len(payload), last + 1), db=state)
            txn.put(b"lastSeq", seq(last + 1), db=meta)
            """)
    }

    private func pythonBytes(_ text: String) -> String {
        "bytes([" + text.utf8.map(String.init).joined(separator: ",") + "])"
    }
}
