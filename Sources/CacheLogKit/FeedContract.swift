#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a feed's body must be, and how its items are cached: the contract a resource loads
/// under (TanStack Query's query function and its cache shape, in one value).
///
/// An app defines its own with a name and a mapper (or a `Decodable` body type); the package's
/// own contracts for the five apps are static members (``films``, ``genres``, …). A save records
/// the contract's name, and the package's own are marked so that no app's name can claim them
/// (`ContractName`).
public struct FeedContract<Item: Sendable>: Sendable {
    /// The name each save records.
    public let name: ContractName
    /// Its app's defaults.
    public let defaults: ResourceDefaults
    /// Turns the items into the cached payload and back.
    public let coder: FeedPayloadCoder<Item>
    /// Accepts a response whose body follows the contract, and gives its items.
    public let map: @Sendable (Data, HTTPResponse) throws -> [Item]

    /// An app's contract named `name`, whose items `coder` caches.
    /// - Parameters:
    ///   - name: recorded with each save; an app's name never collides with the package's own.
    ///   - defaults: the max age, strategy and retries of resources loaded under it.
    ///   - coder: turns items into the payload and back.
    ///   - map: accepts a response (check its status: only a 200 is a feed) and gives its items;
    ///     throw `RemoteLoaderError` (`RemoteLoaderError/invalidData(_:)`) for a body that
    ///     does not follow the contract.
    public init(
        name: String, defaults: ResourceDefaults = ResourceDefaults(), coder: FeedPayloadCoder<Item>,
        map: @escaping @Sendable (Data, HTTPResponse) throws -> [Item]
    ) {
        self.init(name: ContractName(name), defaults: defaults, coder: coder, map: map)
    }

    init(
        name: ContractName, defaults: ResourceDefaults, coder: FeedPayloadCoder<Item>,
        map: @escaping @Sendable (Data, HTTPResponse) throws -> [Item]
    ) {
        self.name = name
        self.defaults = defaults
        self.coder = coder
        self.map = map
    }
}

extension FeedContract where Item: Codable {
    /// An app's contract whose items are cached as JSON with sorted keys.
    public init(
        name: String, defaults: ResourceDefaults = ResourceDefaults(), map: @escaping @Sendable (Data, HTTPResponse) throws -> [Item]
    ) {
        self.init(name: name, defaults: defaults, coder: .json, map: map)
    }

    /// An app's contract whose body is JSON that decodes as `body`: only a 200 whose body decodes
    /// is a feed, and a body that does not is refused with where it breaks the contract.
    /// - Parameters:
    ///   - name: recorded with each save.
    ///   - body: the body's type, for example `[Film].self` or a wrapper object.
    ///   - defaults: the max age, strategy and retries of resources loaded under it.
    ///   - items: the items of a decoded body.
    public static func json<Body: Decodable & SendableMetatype>(
        name: String, body _: Body.Type, defaults: ResourceDefaults = ResourceDefaults(),
        items: @escaping @Sendable (Body) -> [Item]
    ) -> FeedContract {
        FeedContract(name: name, defaults: defaults) { data, response in
            items(try JSONContract.decode(Body.self, from: data, response: response))
        }
    }
}

extension FeedContract where Item: Codable {
    /// A search contract's first page as a feed: what loading a search's URL without a query
    /// caches (the page's items, under the search contract's name and defaults).
    public init(firstPageOf search: SearchContract<Item>) {
        self.init(name: search.name, defaults: search.defaults, coder: .json) { data, response in
            try search.page(data, response, SearchPageRequest(number: 1, numbered: false)).items
        }
    }
}
