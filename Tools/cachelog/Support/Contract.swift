import ArgumentParser
import FeedAPI
import FeedCache
import Foundation

/// The payload contracts `load --contract` knows. Each has a mapper in FeedAPI (or, for `json`,
/// here) that accepts only bodies of that shape, and brings its app's defaults.
enum Contract: String, CaseArgument, Sendable {
    /// `{"items":[{id,description,location,image}]}`
    case images
    /// `[{id,title,description,image,url}]`
    case films
    /// `{"genres":[{id,name}]}`
    case genres
    /// `[{scripture,distance,text}]`
    case verses
    /// `{count,next,previous,results:[{name,…,url}]}`: the items are the page's results.
    case people
    /// `{name,…,url}`: one person alone, from its `url` (the people search's object cache).
    case person
    /// Any JSON: an array's elements are the items, any other value is one item.
    case json

    /// The max age the app's spec gives its cache. The people search spec names none: it gets
    /// the search caches' 30 days, as the verse search spec gives them.
    var maxAge: MaxAge {
        switch self {
        case .images, .films, .genres, .json: .days(7)
        case .verses, .people, .person: .days(30)
        }
    }

    /// The genres app shows a fresh cache without asking the remote, and so does the people
    /// app's object cache; the others ask the remote first.
    var strategy: CacheStrategy { self == .genres || self == .person ? .cacheFirst : .remoteFirst }

    /// The searches: their loads take `--query` and `--more`.
    var isSearch: Bool { self == .verses || self == .people }

    /// Where the page just loaded says the next one is, or `nil` when it was the last: the people
    /// API's `next` URL (http or https); for verses, the next page number, until a page comes back
    /// empty, when the URL has a `{page}` to put it in (`numbered`).
    func nextPage(after data: Data, response: HTTPResponse, items: Int, page: Int, numbered: Bool) -> String? {
        switch self {
        case .people:
            (try? PeoplePageMapper.map(data, from: response))?.next
                .flatMap { $0.isHTTP ? $0.absoluteString : nil }
        case .verses: numbered && items > 0 ? String(page + 1) : nil
        case .images, .films, .genres, .person, .json: nil
        }
    }

    /// The genres app retries invalid data 2 times; the others do not retry.
    var retries: Int { self == .genres ? 2 : 0 }

    /// The app whose spec brought this contract, for the defaults table.
    private var app: String {
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

    /// The defaults table `load --help` and the README show.
    ///
    /// Every run builds it (ArgumentParser reads each command's configuration at start), so it
    /// is built from plain strings: `perf record` of `cachelog state` showed 2 % of the process
    /// in Foundation's `padding(toLength:)` (through NSString), and 2 % in instantiating the
    /// generic types of a dictionary literal and `joined`.
    static let defaultsTable: String = {
        func padded(_ text: String, to width: Int) -> String {
            text + String(repeating: " ", count: max(0, width - text.count))
        }
        var table = ""
        for contract in allCases {
            if !table.isEmpty { table += "\n" }
            table += "  " + padded(contract.rawValue, to: 8) + padded(contract.app, to: 16)
                + padded(contract.maxAge.description, to: 5) + padded(contract.strategy.rawValue, to: 14) + String(contract.retries)
        }
        return table
    }()

    /// Calls `body` with this contract's item type: its mapper, its coder and how an item prints.
    func visit<Body: ContractBody>(_ body: Body) async throws -> Body.Result {
        switch self {
        case .images: try await body.codable(FeedImagesMapper.map, contract: self)
        case .films: try await body.codable(FilmsMapper.map, contract: self)
        case .genres: try await body.codable(GenresMapper.map, contract: self)
        case .verses: try await body.codable(VersesMapper.map, contract: self)
        case .people: try await body.codable({ data, response in try PeoplePageMapper.map(data, from: response).results }, contract: self)
        case .person: try await body.codable({ data, response in [try PersonMapper.map(data, from: response)] }, contract: self)
        case .json:
            try await body.run(JSONItemsMapper.map, coder: .exactJSON, contract: self) { String(decoding: $0.text, as: UTF8.self) }
        }
    }
}

extension CacheStrategy: CaseArgument {}
