import CacheLogKit
import Foundation
import Locking
import LoopbackHTTP
import TestSupport
import Testing

/// `observe()`: the key's cached value now, then each change, whoever makes it.
@Suite("CacheClient: observing a key", .hangGuard)
struct ObserveTests {
    /// Collects what an observer delivers, in a task the test cancels.
    private final class Observed: Sendable {
        let values = Locked<[[String]?]>([])
        let ended = Locked(false)
        let task: Task<Void, Never>

        init(_ stream: AsyncThrowingStream<CacheLoad<Genre>?, any Error>) {
            let values = self.values
            let ended = self.ended
            task = Task {
                do {
                    for try await value in stream { values.withLock { $0.append(value?.items.map(\.name)) } }
                } catch {
                    values.withLock { $0.append(["error: \(error)"]) }
                }
                ended.withLock { $0 = true }
            }
        }

        var delivered: [[String]?] { values.withLock { $0 } }

        func waitFor(_ count: Int) async throws -> Bool {
            try await eventually { self.delivered.count >= count }
        }
    }

    @Test func observe_deliversNothingCachedFirst_thenEachSave_anotherProcesssToo_thenTheRemoval() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let client = try world.client()
        let genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        let observed = Observed(genres.observe(every: .milliseconds(5)))
        defer { observed.task.cancel() }
        #expect(try await observed.waitFor(1))

        _ = try await genres.load()
        #expect(try await observed.waitFor(2))

        world.serve(["/genres.json": .json(#"{"genres":[{"id":9,"name":"History"}]}"#)])
        world.days(8)
        let other = try await world.cachelog("load", world.url("/genres.json").absoluteString, "--key", "genres", "--contract", "genres", now: world.now)
        try #require(other.status == 0, "\(other.stderr)")
        #expect(try await observed.waitFor(3))

        #expect(try await client.remove("genres"))
        #expect(try await observed.waitFor(4))

        #expect(observed.delivered == [nil, ["Comedy", "News"], ["History"], nil])
    }

    @Test func observe_deliversNothingForChangesToOtherKeys() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres), "/films.json": .json(Bodies.films)])
        let client = try world.client()
        let genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        _ = try await genres.load()
        let observed = Observed(genres.observe(every: .milliseconds(5)))
        defer { observed.task.cancel() }
        #expect(try await observed.waitFor(1))

        _ = try await client.feed("films", at: world.url("/films.json"), contract: .films).load()
        _ = try await client.remove("films")
        // A change of genres after them is the second value: nothing came in between.
        try await genres.write([Genre(id: 3, name: "Drama")])
        #expect(try await observed.waitFor(2))
        #expect(observed.delivered == [["Comedy", "News"], ["Drama"]])
    }

    /// The observer is keyed on the put, not on the payload it holds: a refresh that brought the
    /// same bytes is a new cache (a new timestamp, fresh again), and reaches it.
    @Test func observe_deliversARefreshWithTheSameBytes_stampedAnew() async throws {
        let world = try ClientWorld(routes: ["/genres.json": .json(Bodies.genres)])
        let client = try world.client()
        let genres = client.feed("genres", at: world.url("/genres.json"), contract: .genres)
        _ = try await genres.load()
        let first = world.clock.date
        let stamps = Locked<[Date?]>([])
        let task = Task {
            for try await value in genres.observe(every: .milliseconds(5)) { stamps.withLock { $0.append(value?.timestamp) } }
        }
        defer { task.cancel() }
        #expect(try await eventually { stamps.withLock { $0.count } >= 1 })

        world.days(8)
        let refreshed = try await genres.load()
        #expect(refreshed.source == .remote && refreshed.items.count == 2)
        #expect(try await eventually { stamps.withLock { $0.count } >= 2 }, "the refresh never reached the observer")
        #expect(stamps.withLock { $0 } == [first, world.clock.date])
    }

    @Test func observe_endsWhenItsTaskIsCancelled() async throws {
        let world = try ClientWorld()
        let observed = Observed(try world.client().feed("genres", at: world.url("/genres.json"), contract: .genres).observe())
        #expect(try await observed.waitFor(1))
        observed.task.cancel()
        #expect(try await eventually { observed.ended.withLock { $0 } })
        #expect(observed.delivered == [nil])
    }
}
