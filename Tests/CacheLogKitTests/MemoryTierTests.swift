@testable import CacheLogKit
import Foundation
import Locking
import LoopbackHTTP
import Seeding
import TestSupport
import Testing

/// The client's memory tier: decoded items reused while their payload is the key's live one in
/// the log, and never once the log says otherwise, whoever changed it.
@Suite("CacheClient: the memory tier", .hangGuard)
struct MemoryTierTests {
    /// Genres under an app's contract whose coder counts the payloads it decodes.
    private struct CountingGenres {
        let decodes = Locked(0)
        var contract: FeedContract<Genre> {
            let decodes = self.decodes
            let json = FeedPayloadCoder<Genre>.json
            return FeedContract(
                name: "counted-genres",
                coder: FeedPayloadCoder(encode: json.encode, decode: { payload in
                    decodes.withLock { $0 += 1 }
                    return try json.decode(payload)
                }),
                map: { data, response in try FeedContract<Genre>.genres.map(data, response) })
        }
        var count: Int { decodes.withLock { $0 } }
    }

    @Test func aWarmLoad_reusesTheDecodedItems_andAClientWithoutMemoryDecodesEachTime() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let counting = CountingGenres()
        var genres = try world.client().feed("genres", at: world.url("/genres.json"), contract: counting.contract)
        genres.strategy = .cacheFirst
        _ = try await genres.load()                          // from the remote, saved
        let first = try await genres.load()                  // decoded, then held
        let decodedOnce = counting.count
        let warm = try await genres.load()

        #expect(warm.items == first.items && warm.source == first.source)
        #expect(counting.count == decodedOnce, "a warm load decoded again")

        let without = CountingGenres()
        var cold = try world.client(CacheClient.Options(memoryLimit: 0)).feed("genres", at: world.url("/genres.json"), contract: without.contract)
        cold.strategy = .cacheFirst
        _ = try await cold.load()
        _ = try await cold.load()
        #expect(without.count == 2, "without memory each load decodes")
    }

    /// Held items are served only while the cache they came from is fresh, judged by the date the
    /// log gives back: one saved at a random sub-second instant is fresh a second before it is
    /// exactly its max age old, and expired at that instant (a date that came back a hair younger
    /// once kept it served).
    @Test func heldItems_ofACacheExactlyMaxAgeOld_areNotServed_atRandomInstants() async throws {
        var generator = SeededGenerator(seed: 17)
        for _ in 0..<20 {
            let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
            world.clock.set(generator.date())
            var genres = try world.client().feed("genres", at: world.url("/genres.json"), contract: .genres)
            genres.strategy = .cacheFirst
            let saved = try await genres.load()
            #expect(saved.isCached && saved.timestamp == world.clock.date)
            world.serve(["/genres.json": HTTPResponse(status: 500)])

            world.clock.set(saved.timestamp + (7 * 86_400 - 1))
            let held = try await genres.load()
            #expect(held.source == .cache(timestamp: saved.timestamp), "a second younger than its max age is served")
            world.clock.set(saved.timestamp + 7 * 86_400)
            await #expect(throws: NoUsableDataError.self, "saved at \(saved.timestamp.timeIntervalSinceReferenceDate)") {
                try await genres.load()
            }
        }
    }

    @Test func aSaveByAnotherProcess_isSeenByTheNextWarmLoad() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let client = try world.client()
        var genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        genres.strategy = .cacheFirst
        _ = try await genres.load()
        #expect(try await genres.load().items.map(\.name) == ["Comedy", "News"])   // warm now

        world.serve(["/genres.json": .json(#"{"genres":[{"id":9,"name":"History"}]}"#)])
        world.days(8)                                       // expired: the tool asks the remote
        let other = try await world.cachelog("load", world.url("/genres.json").absoluteString, "--key", "genres", "--contract", "genres", now: world.now)
        try #require(other.status == 0, "\(other.stderr)")

        let after = try await genres.load()
        #expect(after.items.map(\.name) == ["History"])
        #expect(after.source == .cache(timestamp: world.clock.date))
    }

    @Test func aRemovalOrAnExpiry_endsWhatTheTierServes() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres), "/films.json": .json(Bodies.films)])
        let client = try world.client()
        var genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        genres.strategy = .cacheOnly
        var films = client.feed("films", at: world.url("/films.json"), contract: .films)
        _ = try await client.feed("genres", at: world.url("/genres.json"), contract: .genres).load()
        _ = try await films.load()
        films.strategy = .cacheOnly
        _ = try await genres.load()
        _ = try await films.load()                           // both warm

        #expect(try await client.remove("genres"))
        await #expect(throws: NoUsableDataError.self) { try await genres.load() }

        world.days(8)
        #expect(try await client.validate().map(\.outcome) == [.expired])
        world.days(-8)                                     // the tier would still call it fresh
        await #expect(throws: NoUsableDataError.self) { try await films.load() }
    }

    /// A "not modified" answer saves the cached feed again; when the tier held its items, the
    /// read gave no bytes, and saving those would have replaced the feed with nothing.
    @Test func aNotModifiedAnswer_afterAWarmRead_savesTheFeedsRealBytes() async throws {
        let world = try ClientWorld(routes: [
            "/genres.json": HTTPResponse(status: 200, headers: [HTTPHeader("ETag", "\"g1\"")], body: Data(Bodies.genres.utf8)),
        ])
        let client = try world.client()
        var genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        genres.strategy = .remoteFirst
        _ = try await genres.load()
        let log = try #require(try client.existingLog())
        let saved = try #require(try log.retrieve("genres")).payload
        world.serve(["/genres.json": HTTPResponse(status: 304, headers: [HTTPHeader("ETag", "\"g1\"")])])

        for day in 1...3 {
            world.days(1)
            let revalidated = try await genres.load()
            #expect(revalidated.revalidated && revalidated.items.map(\.name) == ["Comedy", "News"], "day \(day)")
        }

        #expect(try log.retrieve("genres")?.payload == saved)
        let fresh = try world.client(CacheClient.Options(memoryLimit: 0))
        var check = fresh.feed("genres", at: world.url("/genres.json"), contract: .genres)
        check.strategy = .cacheOnly
        #expect(try await check.load().items.map(\.name) == ["Comedy", "News"])
    }

    @Test func theTier_holdsWithinItsCostLimit_lettingTheLeastRecentlyUsedGo() {
        let tier = MemoryTier(costLimit: 100)
        tier.hold([1, 2], of: "a", payloadSeq: 1, cost: 40)
        tier.hold([3], of: "b", payloadSeq: 2, cost: 40)
        _ = tier.held("a", as: Int.self)                     // a is the more recent now
        tier.hold([4], of: "c", payloadSeq: 3, cost: 40)

        #expect(tier.held("a", as: Int.self)?.items == [1, 2])
        #expect(tier.held("b", as: Int.self) == nil)
        #expect(tier.held("c", as: Int.self)?.payloadSeq == 3)
        #expect(tier.heldCost == 80)
        tier.hold([5], of: "d", payloadSeq: 4, cost: 101)   // more than the limit alone: not held
        #expect(tier.held("d", as: Int.self) == nil && tier.heldCost == 80)
        #expect(tier.held("a", as: String.self) == nil, "items are held for their own type only")
    }
}
