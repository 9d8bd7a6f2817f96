#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One film of the (Studio Ghibli) film feed: `{"id", "title", "description", "image", "url"}`.
public struct Film: Codable, Sendable, Equatable, Hashable {
    /// The film's identity as the API spells it: a UUID (``FilmsMapper`` accepts nothing else),
    /// kept verbatim, so its case survives a round trip through the cache.
    public let id: String
    /// The title.
    public let title: String
    /// A synopsis.
    public let description: String
    /// The poster image.
    public let image: URL
    /// The film's own API resource.
    public let url: URL

    /// Creates a film.
    public init(id: String, title: String, description: String, image: URL, url: URL) {
        self.id = id
        self.title = title
        self.description = description
        self.image = image
        self.url = url
    }
}

/// The film feed contract: a top-level JSON array of ``Film``.
public enum FilmsMapper {
    /// Maps a 200 response whose body matches the contract to its films.
    ///
    /// - Throws: ``RemoteLoaderError/invalidData`` for any other status or body, including a film
    ///   whose `id` is not a UUID (the film model's spec).
    @Sendable
    public static func map(_ data: Data, from response: HTTPResponse) throws -> [Film] {
        let films = try JSONContract.decode([Film].self, from: data, response: response)
        if let bad = films.firstIndex(where: { UUID(uuidString: $0.id) == nil }) {
            throw RemoteLoaderError.invalidData("the id at \"[\(bad)].id\" is not a UUID")
        }
        return films
    }
}
