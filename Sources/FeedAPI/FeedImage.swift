#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One image of the image feed. Its coding keys follow the remote contract
/// (`{"id", "description", "location", "image"}`).
public struct FeedImage: Codable, Sendable, Equatable, Hashable {
    /// The image's identity (a UUID string in JSON).
    public let id: UUID
    /// An optional caption.
    public let description: String?
    /// An optional place name.
    public let location: String?
    /// Where the image bytes are (`image` in JSON).
    public let url: URL

    /// Creates an image.
    public init(id: UUID, description: String?, location: String?, url: URL) {
        self.id = id
        self.description = description
        self.location = location
        self.url = url
    }

    private enum CodingKeys: String, CodingKey {
        case id, description, location
        case url = "image"
    }
}

/// The image feed contract: `{"items": [FeedImage]}`.
public enum FeedImagesMapper {
    private struct Root: Decodable {
        let items: [FeedImage]
    }

    /// Maps a 200 response whose body matches the contract to its images.
    ///
    /// - Throws: ``RemoteLoaderError/invalidData`` for any other status or body.
    @Sendable
    public static func map(_ data: Data, from response: HTTPResponse) throws -> [FeedImage] {
        try JSONContract.decode(Root.self, from: data, response: response).items
    }
}
