import Foundation
import Seeding

/// A film feed as the apps cache it (JSON, sorted keys): what a refresh that changed a few items
/// looks like to the engine, which sees only bytes.
struct FilmFeed {
    struct Film {
        var id: String
        var title: String
        var description: String
    }

    static let words = """
        the of and a to in is was he for it with as his on be at by this had not are but from or have an they which \
        one you were her all she there would their we him been has when who will more no if out so said what up its \
        sky castle witch island war village sea wind mountain train father mother sister brother family dream journey \
        river city magic cat dragon princess prince pilot airship valley bathhouse ghost god wolf boar moon star summer \
        winter school friend letter memory storm fire sun rain garden tree house shop bakery delivery broom flight
        """.split(separator: " ").map(String.init)

    var films: [Film]

    init(count: Int, using generator: inout SeededGenerator) {
        films = (0..<count).map { _ in Self.film(&generator) }
    }

    static func sentence(_ generator: inout SeededGenerator) -> String {
        let text = (0..<Int.random(in: 6...18, using: &generator)).map { _ in words.randomElement(using: &generator) ?? "a" }.joined(separator: " ")
        return text.prefix(1).uppercased() + text.dropFirst() + "."
    }

    static func film(_ generator: inout SeededGenerator) -> Film {
        let id = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        let title = (0..<Int.random(in: 1...4, using: &generator)).map { _ in (words.randomElement(using: &generator) ?? "a").capitalized }
        let description = (0..<Int.random(in: 2...6, using: &generator)).map { _ in sentence(&generator) }
        return Film(id: id, title: title.joined(separator: " "), description: description.joined(separator: " "))
    }

    /// A refresh in which `count` films changed: a new description, a new title, or a film
    /// replaced by another.
    mutating func change(_ count: Int, using generator: inout SeededGenerator) {
        for _ in 0..<count {
            let index = Int.random(in: 0..<films.count, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: films[index].description = (0..<Int.random(in: 2...5, using: &generator)).map { _ in Self.sentence(&generator) }.joined(separator: " ")
            case 1: films[index].title = (Self.words.randomElement(using: &generator) ?? "a").capitalized + " Returns"
            default: films[index] = Self.film(&generator)
            }
        }
    }

    var payload: Data {
        let items = films.map { film in
            #"{"description":"\#(film.description)","id":"\#(film.id)","image":"https://image.example.com/w600/\#(film.id.prefix(12)).jpg","#
                + #""title":"\#(film.title)","url":"https://ghibliapi.example.com/films/\#(film.id)"}"#
        }
        return Data(("[" + items.joined(separator: ",") + "]").utf8)
    }
}
