#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One person of the (Star Wars) people search. Only `name` is required; the other fields are
/// kept when present, verbatim (the API sends numbers as strings and uses `"unknown"`).
public struct Person: Codable, Sendable, Equatable, Hashable {
    /// The name.
    public let name: String
    /// Height in centimetres, as sent.
    public let height: String?
    /// Mass in kilograms, as sent.
    public let mass: String?
    /// Birth year, for example `19BBY` (`birth_year` in JSON).
    public let birthYear: String?
    /// Gender, as sent.
    public let gender: String?
    /// The person's own resource: where to load this person alone (the key of its object cache).
    public let url: URL?

    /// Creates a person.
    public init(
        name: String, height: String? = nil, mass: String? = nil, birthYear: String? = nil, gender: String? = nil, url: URL? = nil
    ) {
        self.name = name
        self.height = height
        self.mass = mass
        self.birthYear = birthYear
        self.gender = gender
        self.url = url
    }

    private enum CodingKeys: String, CodingKey {
        case name, height, mass, gender, url
        case birthYear = "birth_year"
    }
}

/// One person alone, as the resource at a person's ``Person/url`` answers: a ``Person`` object.
public enum PersonMapper {
    /// Maps a 200 response whose body is one person.
    ///
    /// - Throws: ``RemoteLoaderError/invalidData`` for any other status or body.
    @Sendable
    public static func map(_ data: Data, from response: HTTPResponse) throws -> Person {
        try JSONContract.decode(Person.self, from: data, response: response)
    }
}

/// One page of people search results: `{"count", "next", "previous", "results": [Person]}`.
public struct PeoplePage: Codable, Sendable, Equatable, Hashable {
    /// The total number of matches over all pages.
    public let count: Int
    /// The next page, or `nil` on the last page.
    public let next: URL?
    /// The previous page, or `nil` on the first page.
    public let previous: URL?
    /// The people on this page.
    public let results: [Person]

    /// Creates a page.
    public init(count: Int, next: URL?, previous: URL?, results: [Person]) {
        self.count = count
        self.next = next
        self.previous = previous
        self.results = results
    }
}

/// The people search contract: one ``PeoplePage``.
public enum PeoplePageMapper {
    /// Maps a 200 response whose body matches the contract to its page.
    ///
    /// - Throws: ``RemoteLoaderError/invalidData`` for any other status or body.
    @Sendable
    public static func map(_ data: Data, from response: HTTPResponse) throws -> PeoplePage {
        try JSONContract.decode(PeoplePage.self, from: data, response: response)
    }
}
