#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `json` contract's mapper: a 200 whose body is JSON. The items keep the server's bytes
/// (see ``JSONValue``).
public enum JSONItemsMapper {
    /// The items of `data` (see ``JSONValue/items(in:)``), when `response` is a 200.
    ///
    /// - Parameters:
    ///   - data: the response's body.
    ///   - response: the response, whose status must be 200.
    /// - Throws: ``RemoteLoaderError``, invalid data: for a status other than 200, or a body that
    ///   is not JSON (with where it breaks).
    @Sendable
    public static func map(_ data: Data, from response: HTTPResponse) throws -> [JSONValue] {
        guard response.statusCode == 200 else { throw RemoteLoaderError.status(response.statusCode) }
        guard let items = JSONValue.items(in: data) else {
            throw RemoteLoaderError.invalidData(JSONScanner.refusal(of: Array(data)) ?? "the body is not JSON")
        }
        return items
    }
}
