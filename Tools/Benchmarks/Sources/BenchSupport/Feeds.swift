import FeedAPI
import Foundation

/// A seeded generator, so every run (and every store in a run) works on the same data.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// SplitMix64.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// English-like text: words drawn with a Zipf distribution (the most common word is drawn about
/// twice as often as the second, and so on), sentences of varied length, capitals and punctuation.
/// Nothing repeats verbatim, so zlib sees the redundancy of prose, not of copied strings.
public struct TextGenerator {
    static let words: [String] = """
        the of and a to in is was he for it with as his on be at by i this had not are but from or have \
        an they which one you were her all she there would their we him been has when who will more no \
        if out so said what up its about into than them can only other new some could time these two may \
        then do first any my now such like our over man me even most made after also did many before must \
        through back years where much your way well down should because each just those people how too \
        little state good very make world still own see men work long get here between both life being \
        under never day same another know while last might us great old year off come since against go \
        came right used take three girl boy forest spirit castle witch sky island war village sea wind \
        mountain train father mother sister brother family dream journey river city magic cat dragon \
        princess prince pilot airship valley bathhouse ghost god wolf boar moon star summer winter school \
        friend letter memory storm fire sun rain garden tree house shop bakery delivery broom flight \
        secret curse spell kingdom empire army soldier engineer airplane flying lost found small young \
        strange ancient hidden mysterious quiet gentle brave stubborn curious lonely kind fierce wise \
        determined reluctant orphaned enchanted forbidden abandoned beautiful terrible powerful mechanical \
        discovers meets travels returns searches fights learns protects escapes finds helps saves loses \
        becomes remembers tries wants leaves arrives begins decides refuses follows defends hides opens \
        across beyond during toward without within upon among along behind beneath above near
        """.split(separator: " ", omittingEmptySubsequences: true).map(String.init)

    var random: SeededGenerator

    public init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    /// A word index with P(k) proportional to 1/(k+1), by inverse transform on the harmonic CDF.
    mutating func word() -> String {
        let n = Double(Self.words.count)
        let u = Double.random(in: 0..<1, using: &random)
        // H(n) ≈ ln(n) + γ; the rank whose partial sum reaches u·H(n) is about exp(u·H(n) − γ).
        let h = log(n) + 0.5772
        let rank = Int(exp(u * h - 0.5772)) - 1
        return Self.words[min(max(rank, 0), Self.words.count - 1)]
    }

    public mutating func sentence() -> String {
        let length = Int.random(in: 6...18, using: &random)
        var parts: [String] = []
        for index in 0..<length {
            var word = word()
            if index == 0 { word = word.prefix(1).uppercased() + word.dropFirst() }
            if index > 2 && index < length - 2 && Int.random(in: 0..<9, using: &random) == 0 { word += "," }
            parts.append(word)
        }
        return parts.joined(separator: " ") + (Int.random(in: 0..<8, using: &random) == 0 ? "!" : ".")
    }

    public mutating func paragraph(sentences: ClosedRange<Int>) -> String {
        (0..<Int.random(in: sentences, using: &random)).map { _ in sentence() }.joined(separator: " ")
    }

    public mutating func title() -> String {
        (0..<Int.random(in: 1...4, using: &random)).map { _ in
            let word = word()
            return word.prefix(1).uppercased() + word.dropFirst()
        }.joined(separator: " ")
    }

    public mutating func uuid() -> String {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
            .uuidString.lowercased()
    }
}

public enum Feeds {
    /// The 8 unrelated feeds of `count` films (seeds 1 to 8) that the saving measures cycle
    /// through, in this process and in the probes it starts.
    public static func cycle(count: Int) -> [[Film]] {
        (0..<8).map { films(count: count, seed: UInt64($0) + 1) }
    }

    /// A film feed of `count` films (the Studio Ghibli API's shape): UUID ids, titles, a synopsis
    /// of 2–6 sentences, poster and resource URLs. `seed` selects the films: different seeds give
    /// different feeds of the same size.
    public static func films(count: Int, seed: UInt64) -> [Film] {
        var text = TextGenerator(seed: seed)
        return (0..<count).map { _ in
            let id = text.uuid()
            let poster = String((0..<27).map { _ in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".randomElement(using: &text.random)! })
            return Film(
                id: id, title: text.title(), description: text.paragraph(sentences: 2...6),
                image: URL(string: "https://image.tmdb.org/t/p/w600_and_h900_bestv2/\(poster).jpg")!,
                url: URL(string: "https://ghibliapi.vercel.app/films/\(id)")!)
        }
    }

    /// Items as LocalFeedLoader stores them: JSON with sorted keys.
    public static func payload<Item: Encodable>(_ items: [Item]) -> Data {
        json(items)
    }

    /// Any value as JSON with sorted keys: a server's response body.
    public static func json<Value: Encodable>(_ value: Value) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try! encoder.encode(value)
    }

    /// A small payload for large logs: one to three films, as an image or search cache would hold.
    public static func smallPayloads(count: Int, seed: UInt64) -> [Data] {
        var random = SeededGenerator(seed: seed)
        return (0..<count).map { index in
            payload(films(count: Int.random(in: 1...3, using: &random), seed: seed &+ UInt64(index) &* 7919))
        }
    }
}

/// The payloads of the five apps, each as its `LocalFeedLoader` stores it (JSON of the items,
/// sorted keys), so that a compression level is judged on every shape the cache holds.
public enum AppPayloads {
    /// Name, item count and payload of each app's cache: the image feed (100 images), the film
    /// feed (100 films), the podcast genres (120 genres), a verse search (20 verses) and the people
    /// search (82 people, every page merged).
    public static func all(seed: UInt64 = 1) -> [(name: String, items: Int, payload: Data)] {
        [
            ("image feed", 100, Feeds.payload(images(count: 100, seed: seed))),
            ("films", 100, Feeds.payload(Feeds.films(count: 100, seed: seed))),
            ("genres", 120, Feeds.payload(genres(count: 120, seed: seed))),
            ("verses", 20, Feeds.payload(verses(count: 20, seed: seed))),
            ("people", 82, Feeds.payload(people(count: 82, seed: seed))),
        ]
    }

    /// EssentialFeed's image feed: UUIDs, an optional description and location, an image URL.
    public static func images(count: Int, seed: UInt64) -> [FeedImage] {
        var text = TextGenerator(seed: seed)
        return (0..<count).map { _ in
            let id = text.uuid()
            let photo = (0..<13).map { _ in String(Int.random(in: 0...9, using: &text.random)) }.joined()
            let description = Int.random(in: 0..<4, using: &text.random) == 0 ? nil : text.sentence()
            let location = Int.random(in: 0..<3, using: &text.random) == 0 ? nil : text.title() + ", " + text.title()
            return FeedImage(
                id: UUID(uuidString: id)!, description: description, location: location,
                url: URL(string: "https://images.unsplash.com/photo-\(photo)-\(id.prefix(12))?w=600&q=80")!)
        }
    }

    /// The podcast genres list: small integer ids and one- to three-word names.
    public static func genres(count: Int, seed: UInt64) -> [Genre] {
        var text = TextGenerator(seed: seed)
        var id = 0
        return (0..<count).map { _ in
            id += Int.random(in: 1...40, using: &text.random)
            let name = (0..<Int.random(in: 1...3, using: &text.random)).map { _ in
                let word = text.word()
                return word.prefix(1).uppercased() + word.dropFirst()
            }.joined(separator: Int.random(in: 0..<3, using: &text.random) == 0 ? " & " : " ")
            return Genre(id: id, name: name)
        }
    }

    /// A verse search: references, full-precision distances and a verse of text each.
    public static func verses(count: Int, seed: UInt64) -> [Verse] {
        var text = TextGenerator(seed: seed)
        let books = ["Genesis", "Exodus", "Psalms", "Proverbs", "Isaiah", "Matthew", "Mark", "Luke", "John", "Romans", "1 Corinthians", "Hebrews", "Revelation"]
        return (0..<count).map { _ in
            let book = books.randomElement(using: &text.random)!
            let reference = "\(book) \(Int.random(in: 1...50, using: &text.random)):\(Int.random(in: 1...40, using: &text.random))"
            return Verse(scripture: reference, distance: Double.random(in: 0.1..<0.6, using: &text.random), text: text.paragraph(sentences: 1...3))
        }
    }

    /// The people search: names, the measurements SWAPI returns as strings, a resource URL.
    public static func people(count: Int, seed: UInt64) -> [Person] {
        var text = TextGenerator(seed: seed)
        let genders = ["male", "female", "n/a", "none", "hermaphrodite"]
        return (1...count).map { index in
            func measure(_ range: ClosedRange<Int>) -> String {
                Int.random(in: 0..<8, using: &text.random) == 0 ? "unknown" : String(Int.random(in: range, using: &text.random))
            }
            return Person(
                name: text.title(), height: measure(60...230), mass: measure(15...160),
                birthYear: Int.random(in: 0..<5, using: &text.random) == 0 ? "unknown" : "\(Int.random(in: 8...900, using: &text.random))BBY",
                gender: genders.randomElement(using: &text.random)!, url: URL(string: "https://swapi.dev/api/people/\(index)/")!)
        }
    }
}
