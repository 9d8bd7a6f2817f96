#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The five apps' contracts, and `json`. Each records its name marked as the package's own
// (`ContractName(builtIn:)`), which no app can do.

extension FeedContract where Item == FeedImage {
    /// The image feed: `{"items":[{id,description,location,image}]}`; 7 days, remote first.
    public static var images: FeedContract {
        FeedContract(name: ContractName(builtIn: "images"), defaults: ResourceDefaults(), coder: .json, map: FeedImagesMapper.map)
    }
}

extension FeedContract where Item == Film {
    /// The Studio Ghibli film feed: `[{id,title,description,image,url}]`; 7 days, remote first.
    public static var films: FeedContract {
        FeedContract(name: ContractName(builtIn: "films"), defaults: ResourceDefaults(), coder: .json, map: FilmsMapper.map)
    }
}

extension FeedContract where Item == Genre {
    /// The podcast genres: `{"genres":[{id,name}]}`; 7 days, cache first, invalid data retried
    /// twice.
    public static var genres: FeedContract {
        FeedContract(
            name: ContractName(builtIn: "genres"), defaults: ResourceDefaults(strategy: .cacheFirst, retries: 2), coder: .json,
            map: GenresMapper.map)
    }
}

extension FeedContract where Item == Person {
    /// One person of the people search, from its own URL: `{name,…,url}`; 30 days, cache first
    /// (the people search's object cache).
    public static var person: FeedContract {
        FeedContract(
            name: ContractName(builtIn: "person"), defaults: ResourceDefaults(maxAge: CachePolicy.search.maxAge, strategy: .cacheFirst), coder: .json,
            map: { data, response in [try PersonMapper.map(data, from: response)] })
    }
}

extension FeedContract where Item == JSONValue {
    /// Any JSON, kept exactly as the server sent it (`JSONValue`): an array's elements are the
    /// items, any other document is the one item; 7 days, remote first.
    public static var json: FeedContract {
        FeedContract(name: ContractName(builtIn: "json"), defaults: ResourceDefaults(), coder: .exactJSON, map: JSONItemsMapper.map)
    }
}

extension FeedContract where Item == Data {
    /// Image data: the bytes as they came (a 200 with at least one byte); 7 days, cache first.
    static var imageData: FeedContract {
        FeedContract(
            name: ContractName(builtIn: "image"), defaults: ResourceDefaults(strategy: .cacheFirst), coder: .bytes,
            map: { data, response in [try FeedImageDataMapper.map(data, from: response)] })
    }
}

extension SearchContract where Item == Verse {
    /// The Bible-verse search: `[{scripture,distance,text}]` a page, numbered through `{page}`
    /// until a page comes back empty; 30 days, remote first.
    public static var verses: SearchContract {
        SearchContract(name: ContractName(builtIn: "verses"), defaults: ResourceDefaults(maxAge: CachePolicy.search.maxAge), objects: nil) {
            data, response, request in
            let items = try VersesMapper.map(data, from: response)
            return SearchPage(items: items, next: request.numbered && !items.isEmpty ? .number(request.number + 1) : nil)
        }
    }
}

extension SearchContract where Item == Person {
    /// The Star Wars people search: `{count,next,previous,results:[{name,…,url}]}` a page, the
    /// next page at the page's `next` URL; 30 days, remote first. Each person with a URL is also
    /// cached as an object under the ``FeedContract/person`` contract.
    public static var people: SearchContract {
        SearchContract(
            name: ContractName(builtIn: "people"), defaults: ResourceDefaults(maxAge: CachePolicy.search.maxAge),
            objects: ObjectCaching(contract: .person) { person in person.url.flatMap { $0.isWebURL ? $0 : nil } }
        ) { data, response, _ in
            let page = try PeoplePageMapper.map(data, from: response)
            return SearchPage(items: page.results, next: page.next.flatMap { $0.isWebURL ? .url($0) : nil })
        }
    }
}

extension URL {
    /// Whether this is an http or https URL (a page's `next` or a person's `url` may be anything).
    var isWebURL: Bool { ["http", "https"].contains(scheme?.lowercased() ?? "") }
}
