#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The contracts this package ships, by name: what a tool that takes a contract by name (the
/// `cachelog` tool's `--contract`) dispatches on, and what a validation that knows nothing of an
/// app can decode a payload under.
public enum BuiltInContract: String, CaseIterable, Sendable {
    /// ``FeedContract/images``
    case images
    /// ``FeedContract/films``
    case films
    /// ``FeedContract/genres``
    case genres
    /// ``SearchContract/verses``
    case verses
    /// ``SearchContract/people``
    case people
    /// ``FeedContract/person``
    case person
    /// ``FeedContract/json``
    case json

    /// The app whose spec brought the contract.
    public var app: String {
        switch self {
        case .images: "image feed"
        case .films: "film feed"
        case .genres: "podcast genres"
        case .verses: "verse search"
        case .people: "people search"
        case .person: "one person"
        case .json: "any JSON"
        }
    }

    /// Its app's defaults. The people search spec names no max age: it gets the search caches'
    /// 30 days, as the verse search spec gives them.
    public var defaults: ResourceDefaults {
        switch self {
        case .images: FeedContract.images.defaults
        case .films: FeedContract.films.defaults
        case .genres: FeedContract.genres.defaults
        case .verses: SearchContract.verses.defaults
        case .people: SearchContract.people.defaults
        case .person: FeedContract.person.defaults
        case .json: FeedContract.json.defaults
        }
    }

    /// Whether it is a search's contract (its resources take a query and load more).
    public var isSearch: Bool { self == .verses || self == .people }

    /// The name its saves record.
    public var name: ContractName { ContractName(builtIn: rawValue) }

    /// Calls `visitor` with the contract's typed value.
    ///
    /// - Parameter visitor: the work, for a feed's contract or a search's.
    /// - Returns: What the visitor gives.
    /// - Throws: What the visitor throws, unchanged.
    public func visit<Visitor: BuiltInContractVisitor>(_ visitor: Visitor) async throws -> Visitor.Result {
        switch self {
        case .images: try await visitor.feed(FeedContract.images)
        case .films: try await visitor.feed(FeedContract.films)
        case .genres: try await visitor.feed(FeedContract.genres)
        case .verses: try await visitor.search(SearchContract.verses)
        case .people: try await visitor.search(SearchContract.people)
        case .person: try await visitor.feed(FeedContract.person)
        case .json: try await visitor.feed(FeedContract.json)
        }
    }

    /// A coder that checks a payload decodes under the package's contract `name`, for a
    /// validation that judges payloads as bytes; `nil` for a name that is not the package's.
    static func checkingCoder(_ name: ContractName) -> FeedPayloadCoder<Data>? {
        guard name.isBuiltIn else { return nil }
        func checking<Item>(_ coder: FeedPayloadCoder<Item>) -> FeedPayloadCoder<Data> {
            FeedPayloadCoder(encode: { $0.first ?? Data() }, decode: { payload in _ = try coder.decode(payload); return [payload] })
        }
        return switch BuiltInContract(rawValue: name.name) {
        case .images: checking(FeedContract.images.coder)
        case .films: checking(FeedContract.films.coder)
        case .genres: checking(FeedContract.genres.coder)
        case .verses: checking(FeedPayloadCoder<Verse>.json)
        case .people: checking(FeedPayloadCoder<Person>.json)
        case .person: checking(FeedContract.person.coder)
        case .json: checking(FeedContract.json.coder)
        // The image contract's payload is the bytes as they came: any bytes are an image.
        case nil: .bytes
        }
    }
}

/// Work that depends on a built-in contract's item type (see ``BuiltInContract/visit(_:)``).
public protocol BuiltInContractVisitor: Sendable {
    /// What the work gives.
    associatedtype Result
    /// The work for a feed's contract.
    func feed<Item: Sendable>(_ contract: FeedContract<Item>) async throws -> Result
    /// The work for a search's contract.
    func search<Item: Codable & Sendable>(_ contract: SearchContract<Item>) async throws -> Result
}
