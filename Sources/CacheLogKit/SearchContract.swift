#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a search's pages must be, how their items are cached, and where the next page is: the
/// contract a ``SearchResource`` loads under (TanStack Query's infinite query, with its
/// `getNextPageParam`).
public struct SearchContract<Item: Codable & Sendable>: Sendable {
    /// The name each save records.
    public let name: ContractName
    /// Its app's defaults (a search's cache serves 30 days unless told otherwise).
    public let defaults: ResourceDefaults
    /// Accepts one page's response and gives its items and where the next page is.
    public let page: @Sendable (Data, HTTPResponse, SearchPageRequest) throws -> SearchPage<Item>
    /// The object cache: each item a page returns that has a URL of its own is also cached
    /// under `object:URL`, in the same append as the search; `nil` for none.
    public let objects: ObjectCaching<Item>?

    /// An app's search contract named `name`.
    /// - Parameters:
    ///   - name: recorded with each save; an app's name never collides with the package's own.
    ///   - defaults: max age (30 days by default), strategy and retries.
    ///   - objects: which items are also cached as objects, and under which contract.
    ///   - page: accepts a page (check its status: only a 200 is a page) and gives its items and
    ///     the next page's cursor, `nil` on the last page.
    public init(
        name: String, defaults: ResourceDefaults = ResourceDefaults(maxAge: CachePolicy.search.maxAge), objects: ObjectCaching<Item>? = nil,
        page: @escaping @Sendable (Data, HTTPResponse, SearchPageRequest) throws -> SearchPage<Item>
    ) {
        self.init(name: ContractName(name), defaults: defaults, objects: objects, page: page)
    }

    init(
        name: ContractName, defaults: ResourceDefaults, objects: ObjectCaching<Item>?,
        page: @escaping @Sendable (Data, HTTPResponse, SearchPageRequest) throws -> SearchPage<Item>
    ) {
        self.name = name
        self.defaults = defaults
        self.objects = objects
        self.page = page
    }
}

/// One page of a search: its items and where the next page is.
public struct SearchPage<Item: Sendable>: Sendable {
    /// The page's items.
    public var items: [Item]
    /// Where the next page is; `nil` when this was the last.
    public var next: PageCursor?

    /// A page of `items` followed by `next`.
    public init(items: [Item], next: PageCursor?) {
        self.items = items
        self.next = next
    }
}

/// Where a search's next page is, as the search's put records it (so that a later process can
/// load more): a page number to put in the URL template's `{page}`, or a URL the server gave.
public enum PageCursor: Sendable, Hashable {
    /// The page of this number (1 is the first), through the template's `{page}`.
    case number(Int)
    /// The URL the server named for the next page.
    case url(URL)

    /// How the put records it.
    var recorded: String {
        switch self {
        case .number(let number): String(number)
        case .url(let url): url.absoluteString
        }
    }

    /// The cursor a put recorded; `nil` for text that is neither a number nor an http(s) URL.
    init?(recorded: String) {
        if let number = Int(recorded), number > 0 {
            self = .number(number)
        } else if let url = URL(string: recorded), ["http", "https"].contains(url.scheme?.lowercased() ?? "") {
            self = .url(url)
        } else {
            return nil
        }
    }
}

/// The page a search contract is mapping.
public struct SearchPageRequest: Sendable, Hashable {
    /// Its number, counting from 1, when pages are numbered through the template's `{page}`.
    public var number: Int
    /// Whether the URL template has a `{page}` to number pages with.
    public var numbered: Bool

    /// The request for page `number` of a template that has (`numbered`) or has not a `{page}`.
    public init(number: Int, numbered: Bool) {
        self.number = number
        self.numbered = numbered
    }
}

/// Which items of a search are also cached one by one, as objects: the people search caches each
/// person under `object:URL`, so that loading that person asks nothing of the remote while fresh.
public struct ObjectCaching<Item: Codable & Sendable>: Sendable {
    /// The URL an item is cached under; `nil` for an item with none.
    public let url: @Sendable (Item) -> URL?
    /// The contract each object is saved under (its name and max age are recorded).
    public let contract: FeedContract<Item>

    /// Objects at `url(item)`, saved under `contract`.
    public init(contract: FeedContract<Item>, url: @escaping @Sendable (Item) -> URL?) {
        self.contract = contract
        self.url = url
    }
}

extension SearchContract {
    /// An app's search whose pages are JSON that decodes as `body`: only a 200 whose body
    /// decodes is a page, and a body that does not is refused with where it breaks the contract
    /// (as ``FeedContract/json(name:body:defaults:items:)`` does for a feed).
    /// - Parameters:
    ///   - name: recorded with each save; its searches are keyed `search:app/NAME:QUERY`.
    ///   - body: the page's type, for example a wrapper with `results` and `next`.
    ///   - defaults: max age (30 days by default), strategy and retries.
    ///   - objects: which items are also cached as objects, and under which contract.
    ///   - items: the items of a decoded page.
    ///   - next: where the page after it is, `nil` on the last: a ``PageCursor/url(_:)`` the
    ///     server named, or the ``PageCursor/number(_:)`` after the request's.
    public static func json<Body: Decodable & SendableMetatype>(
        name: String, body _: Body.Type, defaults: ResourceDefaults = ResourceDefaults(maxAge: CachePolicy.search.maxAge),
        objects: ObjectCaching<Item>? = nil, items: @escaping @Sendable (Body) -> [Item],
        next: @escaping @Sendable (Body, SearchPageRequest) -> PageCursor?
    ) -> SearchContract {
        SearchContract(name: name, defaults: defaults, objects: objects) { data, response, request in
            let body = try JSONContract.decode(Body.self, from: data, response: response)
            return SearchPage(items: items(body), next: next(body, request))
        }
    }
}
