import ArgumentParser
import FeedAPI
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The payload contracts `load --contract` knows. Each has a mapper in FeedAPI (or, for `json`,
/// here) that accepts only bodies of that shape.
enum Contract: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// `{"items":[{id,description,location,image}]}`
    case images
    /// `[{id,title,description,image,url}]`
    case films
    /// `{"genres":[{id,name}]}`
    case genres
    /// `[{scripture,distance,text}]`
    case verses
    /// `{count,next,previous,results:[{name,…}]}`: the items are the page's results.
    case people
    /// Any JSON: an array's elements are the items, any other value is one item.
    case json
}

/// The `json` contract's mapper: a 200 whose body is JSON. The items keep the server's bytes
/// (see ``JSONValue``).
enum JSONItemsMapper {
    @Sendable
    static func map(_ data: Data, from response: HTTPURLResponse) throws -> [JSONValue] {
        guard response.statusCode == 200, let items = JSONValue.items(in: data) else {
            throw RemoteLoaderError.invalidData
        }
        return items
    }
}
