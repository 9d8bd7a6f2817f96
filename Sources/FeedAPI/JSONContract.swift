import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The rule every JSON contract shares: HTTP 200 and a body that decodes as `Body`.
enum JSONContract {
    static func decode<Body: Decodable>(_: Body.Type, from data: Data, response: HTTPURLResponse) throws -> Body {
        guard response.statusCode == 200 else { throw RemoteLoaderError.invalidData }
        do {
            return try JSONDecoder().decode(Body.self, from: data)
        } catch {
            throw RemoteLoaderError.invalidData
        }
    }
}
