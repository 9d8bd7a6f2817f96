import FeedAPI
import Foundation

/// The time of a simulation: moved on by the run, read by the engine (`recordedAt`), the cache's
/// loaders and the simulated remote, so that a year passes in minutes and nothing waits.
public final class SimulatedClock: @unchecked Sendable {
    private let lock = NSLock()
    private var date: Date

    public init(_ date: Date) { self.date = date }

    public var now: Date { lock.withLock { date } }
    public func advance(_ seconds: TimeInterval) { lock.withLock { date += seconds } }
}

/// A film feed refreshed again and again: each refresh gives `changing` films a new synopsis
/// (2 to 6 sentences of the same English-like text), as a catalogue whose entries get edited, so
/// that what changes compresses as a real edit would.
public struct FilmRefreshes {
    public private(set) var films: [Film]
    private var text: TextGenerator
    private var random: SeededGenerator

    public init(films: [Film], seed: UInt64 = 99) {
        self.films = films
        text = TextGenerator(seed: seed)
        random = SeededGenerator(seed: seed &- 1)
    }

    /// The feed after the next refresh.
    public mutating func next(changing: Int = 2) -> [Film] {
        for _ in 0..<changing {
            let index = Int.random(in: 0..<films.count, using: &random)
            let film = films[index]
            films[index] = Film(id: film.id, title: film.title, description: text.paragraph(sentences: 2...6), image: film.image, url: film.url)
        }
        return films
    }
}

/// Image data as a poster server sends it: JPEG-like bytes (incompressible) of about 40 KB,
/// new bytes for every week of every poster.
public enum Posters {
    public static func bytes(poster: Int, week: Int, seed: UInt64 = 40) -> Data {
        var random = SeededGenerator(seed: seed &+ UInt64(poster) &* 1_000_003 &+ UInt64(week) &* 7_919)
        let length = Int.random(in: 36_000...44_000, using: &random)
        var data = Data(count: length)
        data.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < length {
                var word = random.next()
                let count = min(8, length - offset)
                withUnsafeBytes(of: &word) { raw.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: count) }
                offset += count
            }
            // A JPEG's start-of-image marker, as the first bytes of any poster.
            raw[0] = 0xFF
            raw[1] = 0xD8
        }
        return data
    }
}

/// A remote in the same process: answers each request from `respond` (200 with the body it
/// returns, 404 for nil), with no socket and no waiting, and counts the requests.
public final class SimulatedRemote: HTTPClient, @unchecked Sendable {
    private let respond: @Sendable (URL) -> Data?
    private let lock = NSLock()
    private var count = 0

    public init(_ respond: @escaping @Sendable (URL) -> Data?) { self.respond = respond }

    public var requests: Int { lock.withLock { count } }

    public func get(from url: URL) async throws -> (Data, HTTPResponse) {
        lock.withLock { count += 1 }
        guard let body = respond(url) else { return (Data(), HTTPResponse(url: url, statusCode: 404)) }
        return (body, HTTPResponse(url: url, statusCode: 200))
    }
}
