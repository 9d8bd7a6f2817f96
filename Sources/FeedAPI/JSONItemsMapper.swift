#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `json` contract's mapper: a 200 whose body is JSON. The items keep the server's bytes
/// (see ``JSONValue``).
public enum JSONItemsMapper {
    /// The items of `data` (see ``JSONValue/items(in:)``), when `response` is a 200.
    @Sendable
    public static func map(_ data: Data, from response: HTTPResponse) throws -> [JSONValue] {
        guard response.statusCode == 200 else { throw RemoteLoaderError.status(response.statusCode) }
        guard let items = JSONValue.items(in: data) else {
            throw RemoteLoaderError.invalidData(JSONScanner.refusal(of: Array(data)) ?? "the body is not JSON")
        }
        return items
    }
}
