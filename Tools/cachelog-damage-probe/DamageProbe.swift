// cachelog-damage-probe: the process the damage fuzz runs against a damaged database.
//
//   cachelog-damage-probe seed DB     writes a database worth damaging into DB
//   cachelog-damage-probe probe DB    calls the public API on DB, one line per call
//
// `seed` writes 20 caches of about 200 KB, 600 small ones (branch pages in every table), one
// key saved 400 times (its seqs a tree of their own in the key index) and a delta chain.
// `probe` calls what an app calls, through CacheLogKit only, and prints "NAME ok" or
// "NAME error: DESCRIPTION" for each; a damaged database must answer every call so, never end
// the process by a signal. Last it opens with `onDamage: .moveAside`, saves, and verifies:
// "recovered ok" (the save served back, and a database moved aside replaced by a clean one), or
// an error line for a file that is
// no damaged database (whose open throws no `isDamage` error, so nothing is moved).
//
// Exit status: 0 when every call answered (whatever it answered), 1 when recovery did not give
// a clean database, 64 on bad arguments.
import CacheLogKit
import Foundation

@main
struct DamageProbe {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count == 2, ["seed", "probe"].contains(arguments[0]) else {
            FileHandle.standardError.write(Data("usage: cachelog-damage-probe seed|probe DB\n".utf8))
            exit(64)
        }
        let db = arguments[1]
        if arguments[0] == "seed" {
            do {
                try await seed(db)
            } catch {
                FileHandle.standardError.write(Data("cachelog-damage-probe: \(error)\n".utf8))
                exit(1)
            }
        } else {
            exit(await probe(db) ? 0 : 1)
        }
    }

    /// A URL nothing listens on: a load that tries the remote fails at once, on this machine.
    static let nowhere = URL(string: "http://127.0.0.1:9/feed.json")!

    static func seed(_ db: String) async throws {
        let client = try CacheClient(directory: db, options: .init(durability: .unsynced))
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func text(_ count: Int) -> String {
            var out = ""
            out.reserveCapacity(count)
            for _ in 0..<count / 16 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                out += String(state, radix: 16)
            }
            return out
        }
        for index in 0..<20 {
            let item = JSONValue(text: Array("{\"id\":\(index),\"text\":\"\(text(200_000))\"}".utf8))
            try await client.feed("large-\(index)", at: nowhere, contract: .json).write([item])
        }
        for index in 0..<600 {
            try await client.feed("small-\(index)", at: nowhere, contract: .json).write([JSONValue(text: Array("\(index)".utf8))])
        }
        let base = text(20_000)
        for round in 0..<400 {
            let item = JSONValue(text: Array("{\"round\":\(round),\"text\":\"\(base)\"}".utf8))
            try await client.feed("often", at: nowhere, contract: .json).write([item])
        }
        _ = try await client.feed("small-0", at: nowhere, contract: .json).remove()
    }

    /// Calls the public API on `db`; false when recovery left something other than a clean database.
    static func probe(_ db: String) async -> Bool {
        func call(_ name: String, _ body: () async throws -> String) async {
            do {
                let answer = try await body()
                print("\(name) ok \(answer)")
            } catch {
                print("\(name) error: \(error)".replacingOccurrences(of: "\n", with: " "))
            }
        }
        await call("client") {
            let client = try CacheClient(directory: db)
            await call("verify") { "\(try client.log().verify().problems.count) problems" }
            await call("state") { "\(try client.log().state().entries.count) keys" }
            await call("load") { "\(try await client.feed("large-3", at: nowhere, contract: .json).load().items.count) items" }
            await call("load-cache-only") {
                var feed = client.feed("often", at: nowhere, contract: .json)
                feed.strategy = .cacheOnly
                return "\(try await feed.load().items.count) items"
            }
            await call("validate") { "\(try await client.validate().count) outcomes" }
            await call("write") { try await client.feed("small-5", at: nowhere, contract: .json).write([JSONValue(text: Array("5".utf8))]); return "" }
            await call("remove") { "\(try await client.remove("small-7"))" }
            await call("keys") { "\(try client.log().keys().count)" }
            return ""
        }
        await call("log") {
            let log = try EventLog(path: db, options: .init(readOnly: true))
            await call("stats") { "\(try log.stats().liveKeys) live" }
            await call("replay") {
                var count = 0
                try log.forEachEvent(EventQuery(includePayload: true)) { _ in
                    count += 1
                    return true
                }
                return "\(count) events"
            }
            await call("replay-reverse") {
                var count = 0
                try log.forEachEvent(EventQuery(reverse: true)) { _ in
                    count += 1
                    return true
                }
                return "\(count) events"
            }
            await call("key-history") { "\(try log.events(EventQuery(key: "often", reverse: true)).count) events" }
            await call("retrieve") {
                var found = 0
                for key in try log.keys() where try log.retrieve(key) != nil { found += 1 }
                return "\(found) values"
            }
            await call("state-as-of") { "\(try log.state(asOf: .seq(max(1, try log.lastSeq() / 2))).entries.count) keys" }
            await call("retention") { "\(try log.retentionStatus())".prefix(40).description }
            return ""
        }
        await call("maintenance") {
            let log = try EventLog(path: db)
            await call("rebuild") { "\(try await log.rebuildState())".prefix(40).description }
            await call("compact") { "\(try await log.compact(before: .seq(max(1, try log.lastSeq() / 2))))".prefix(40).description }
            await call("apply-retention") { "\(String(describing: try await log.applyRetention()).prefix(40))" }
            return ""
        }
        var recovered = false
        await call("recovered") {
            let client: CacheClient
            do {
                client = try CacheClient(directory: db, options: .init(onDamage: .moveAside))
            } catch let error as CacheLogError where !error.isDamage {
                // Not damage of a CacheLog database (no meta page LMDB can read): not moved.
                recovered = true
                throw error
            }
            try await client.feed("after", at: nowhere, contract: .json).write([JSONValue(text: Array("1".utf8))])
            let report = try client.log().verify()
            let served = try await {
                var feed = client.feed("after", at: nowhere, contract: .json)
                feed.strategy = .cacheOnly
                return try await feed.load().items
            }()
            // A database moved aside leaves a new one, clean; one that was not moved keeps the
            // damage of its records (which verify names and rebuild repairs), and still saves.
            let movedAside = try FileManager.default.contentsOfDirectory(atPath: db).contains { $0.hasPrefix("data.mdb.damaged-") }
            guard report.isClean || !movedAside, served == [JSONValue(text: Array("1".utf8))] else {
                return "but not clean: \(report.problems)"
            }
            recovered = true
            return ""
        }
        return recovered
    }
}
