import CacheLogKit
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

/// Images through the entry point: a recorded max age, cache first while fresh, and an unchanged
/// image saved again as a reference to the bytes already stored.
@Suite("CacheClient: images", .hangGuard)
struct ImageResourceTests {
    /// Bytes that do not compress, as a JPEG's do not.
    private static let poster: Data = {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }()

    @Test func image_recordsItsMaxAge_andServesFromTheCacheWithNoRequestWhileFresh() async throws {
        let world = try ClientWorld(routes: ["/poster.jpg": HTTPResponse(status: 200, body: Self.poster)])
        let client = try world.client()
        var image = client.image(at: world.url("/poster.jpg"))
        image.maxAge = .days(2)

        let first = try await image.load()
        world.days(1)
        let second = try await client.image(at: world.url("/poster.jpg")).load()

        #expect(first.items == [Self.poster] && first.isCached && first.key == "image:" + world.url("/poster.jpg").absoluteString)
        #expect(second.source == .cache(timestamp: first.timestamp) && second.items == [Self.poster])
        #expect(world.server.requestCount == 1)
        let entry = try #require(try client.log().entry(first.key))
        #expect(entry.maxAge == TimeInterval(2 * 86_400), "a cron job judges the image by the max age it was saved under")
        #expect(try await client.validate(key: first.key).map(\.outcome) == [.fresh])
        world.days(1)
        #expect(try await client.validate(key: first.key).map(\.outcome) == [.expired])
    }

    @Test func anUnchangedImage_savedAgain_costsAReferenceNotASecondCopy() async throws {
        let world = try ClientWorld(routes: ["/poster.jpg": HTTPResponse(status: 200, body: Self.poster)])
        let client = try world.client()
        _ = try await client.image(at: world.url("/poster.jpg")).load()
        world.days(8)

        let again = try await client.image(at: world.url("/poster.jpg")).load()

        #expect(again.source == .remote && again.isCached)
        let puts = try client.log().events(EventQuery(kinds: [.put])).compactMap { if case .event(let event) = $0 { event } else { nil } }
        #expect(puts.count == 2)
        #expect(puts.map(\.payloadBytes) == [Self.poster.count, Self.poster.count])
        #expect(puts[1].storedBytes < puts[0].storedBytes / 4, "the second put refers to the first one's bytes: \(puts.map(\.storedBytes))")
    }
}
