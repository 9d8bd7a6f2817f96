#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One podcast genre: `{"id": Int, "name": String}`.
public struct Genre: Codable, Sendable, Equatable, Hashable {
    /// The genre's identity.
    public let id: Int
    /// The display name.
    public let name: String

    /// Creates a genre.
    public init(id: Int, name: String) {
        self.id = id
        self.name = name
    }
}

/// The podcast genres contract: `{"genres": [Genre]}`.
public enum GenresMapper {
    private struct Root: Decodable {
        let genres: [Genre]
    }

    /// Maps a 200 response whose body matches the contract to its genres.
    ///
    /// - Throws: ``RemoteLoaderError/invalidData`` for any other status or body.
    @Sendable
    public static func map(_ data: Data, from response: HTTPResponse) throws -> [Genre] {
        try JSONContract.decode(Root.self, from: data, response: response).genres
    }
}
