// cachelog-writer: a second process for the engine's multi-process, crash and full-disk tests.
//
//   cachelog-writer DB COUNT [--batch | --mixed] [--seed N] [--map-size BYTES] [--payload-bytes N]
//                   [--delay-ms N] [--file-size-limit BYTES] [--checkpoint-interval N] [--lag N,N,…]
//                   [--unsynced]
//   cachelog-writer DB COUNT --history [--keys N] [--start DATE] [--days N] [--seed N]
//   cachelog-writer DB COUNT --client-writes KEY
//
// Appends COUNT saves to key "k<i % 7>", printing the seq range of each append on stdout as it
// commits, so a parent can tell exactly which appends were acknowledged before it killed this
// process. With --lag, save i is a conditional append whose fetch began the i-th of those numbers
// of events before it (cycled): at the log's last seq minus that, or 0. It is appended unless the
// key's live entry is newer by the log's order; a superseded save prints "superseded SEQ SINCE",
// the seq of that live entry and the position the save's fetch began at. With --history it writes
// a dated history over many keys instead (HistoryWriter); with --client-writes, COUNT writes of
// KEY through the library's client, as an app writes (ClientWriter).
//
// `cachelog-writer --help` lists the options; `--seed` payloads are `SeededGenerator.payload(seed:index:count:)` (Tests/Seeding)
// below, and `--file-size-limit` makes a write past it fail with EFBIG, as a full disk does.
//
// Exit status: 0 when every append committed, 1 (with the error on stderr) when one failed.
import ArgumentParser
import CacheLog
import Foundation
import Seeding
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct CacheLogWriter: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cachelog-writer", abstract: "Append COUNT saves to DB, printing each append's seq range as it commits.")

    @Argument(help: "The database directory.") var db: String
    @Argument(help: "How many saves to append.") var count: Int
    @Flag(help: "Each save is delete + put in one append, as a feed save is.") var batch = false
    @Flag(help: "Save i is a delete + put batch when i is odd, a single put when i is even.") var mixed = false
    @Option(help: "Payloads from this seed (SeededGenerator.payload in Tests/Seeding); random without it.") var seed: UInt64?
    @Option(name: .customLong("map-size"), help: "The initial map size in bytes.") var mapSize = 64 << 20
    @Option(name: .customLong("payload-bytes"), help: "Bytes per payload.") var payloadBytes = 64
    @Option(name: .customLong("delay-ms"), help: "Milliseconds to wait after each append.") var delayMilliseconds = 0
    @Option(name: .customLong("file-size-limit"), help: "RLIMIT_FSIZE in bytes, with SIGXFSZ ignored.") var fileSizeLimit: UInt64?
    @Option(name: .customLong("checkpoint-interval"), help: "Events between checkpoints.") var checkpointInterval = 4096
    @Option(help: "Fetch lags (events, comma-separated, cycled): save i's fetch began that many events before it (at lastSeq minus the lag, or 0), and it is appended unless the key's live entry is newer by the log's order.")
    var lag: String?
    @Flag(help: "Commit without syncing (unsynced durability), then sync once after the last append.") var unsynced = false
    @Option(name: .customLong("retention-history"), help: "Record a retention policy keeping this many seconds of history (0: none) before appending; the writer then applies it as it goes.")
    var retentionHistory: Double?
    @Option(name: .customLong("size-limit"), help: "With a retention policy: the size limit in bytes.") var sizeLimit: Int?
    @Flag(help: "Write a dated history of COUNT events instead (saves, expires, deletes over --keys keys and --days days from --start, recorded at those times; unsynced batches): the report's scale test.") var history = false
    @Option(help: "With --history: how many keys.") var keys = 1000
    @Option(help: "With --history: when the history starts (RFC 3339).") var start = "2026-09-01T00:00:00Z"
    @Option(help: "With --history: how many days it spans.") var days = 90
    @Option(name: .customLong("client-writes"), help: "Write COUNT genres lists to this key through the library's client (FeedResource.write) instead, printing \"written N\" as each returns.")
    var clientWrites: String?

    /// A negative count would trap in the loops below instead of saying what is wrong.
    func validate() throws {
        guard count >= 0, payloadBytes >= 0 else { throw ValidationError("COUNT and --payload-bytes must not be negative") }
        if let lag, lags.count != lag.split(separator: ",").count || lags.isEmpty {
            throw ValidationError("--lag takes numbers of events, comma-separated, such as 0,3,1000000")
        }
    }

    func run() async throws {
        do {
            if let fileSizeLimit { try Self.limitFileSize(to: fileSizeLimit) }
            if let clientWrites {
                try await ClientWriter(path: db, key: clientWrites, count: count).write()
            } else if history {
                guard keys > 0, days > 0, let first = ISO8601DateFormatter().date(from: start) else {
                    throw ValidationError("--history needs --keys and --days above 0 and --start as 2026-09-01T00:00:00Z")
                }
                try await HistoryWriter(path: db, count: count, keys: keys, start: first, days: days, seed: seed ?? 1).write()
            } else {
                try await append()
            }
        } catch {
            FileHandle.standardError.write(Data("cachelog-writer: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    private func append() async throws {
        let log = try EventLog(path: db, options: .init(
            durability: unsynced ? .unsynced : .synced, initialMapSize: mapSize, checkpointInterval: checkpointInterval))
        if retentionHistory != nil || sizeLimit != nil {
            let seq = try await log.setRetentionPolicy(RetentionPolicy(history: retentionHistory, sizeLimit: sizeLimit), by: "cachelog-writer")
            FileHandle.standardOutput.write(Data("policy \(seq)\n".utf8))
        }
        var generator = SystemRandomNumberGenerator()
        let lags = lags
        for i in 0..<count {
            let key = "k\(i % 7)"
            // Varied bytes, so that compression cannot shrink the payload to nothing.
            let bytes = seed.map { SeededGenerator.payload(seed: $0, index: i, count: payloadBytes) }
                ?? Data((0..<payloadBytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let put = Event.put(key: key, payload: bytes, timestamp: Date())
            let isBatch = batch || (mixed && i % 2 == 1)
            let events: [Event] = isBatch ? [.delete(key: key, reason: .replaced), put] : [put]
            let line: String
            if lags.isEmpty {
                let range = try await log.append(events)
                line = "\(range.lowerBound) \(range.upperBound)"
            } else {
                let last = try log.lastSeq()
                let lag = lags[i % lags.count]
                let since = last > lag ? last - lag : 0
                switch try await log.append(events, unlessSupersededSince: since, liveAt: key) {
                case .appended(let range, _): line = "\(range.lowerBound) \(range.upperBound)"
                case .superseded(let live): line = "superseded \(live.seq) \(since)"
                case .removed(let seq, _): line = "removed \(seq) \(since)"
                }
            }
            // Unbuffered, so every acknowledged append reaches the parent before a kill can lose it.
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
            if delayMilliseconds > 0 { try await Task.sleep(for: .milliseconds(delayMilliseconds)) }
        }
        if unsynced { try log.sync() }
    }

    /// The `--lag` numbers; empty without the option.
    private var lags: [UInt64] {
        (lag ?? "").split(separator: ",").compactMap { UInt64($0) }
    }

    /// Past the limit a write fails with EFBIG instead of the process dying of SIGXFSZ.
    private static func limitFileSize(to limit: UInt64) throws {
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
        #else
        let resource = RLIMIT_FSIZE
        #endif
        signal(SIGXFSZ, SIG_IGN)
        var rlim = rlimit()
        getrlimit(resource, &rlim)
        rlim.rlim_cur = rlim_t(limit)
        guard setrlimit(resource, &rlim) == 0 else { throw SetLimitError(errno: errno) }
    }
}

struct SetLimitError: Error, CustomStringConvertible {
    let errno: Int32
    var description: String { "setrlimit(RLIMIT_FSIZE) failed: errno \(errno)" }
}
