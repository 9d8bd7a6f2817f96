#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The rule every JSON contract shares: HTTP 200 and a body that decodes as `Body`. A body that
/// does not is refused with the place it breaks the contract, in words. An app's own mapper can
/// use it as the package's mappers do.
public enum JSONContract {
    /// The body of a 200 response, decoded as `Body`.
    ///
    /// - Throws: ``RemoteLoaderError/status(_:)`` for another status, and
    ///   ``RemoteLoaderError/invalidData(_:)`` saying where a body that does not decode breaks
    ///   the contract.
    public static func decode<Body: Decodable>(_: Body.Type, from data: Data, response: HTTPResponse) throws -> Body {
        guard response.statusCode == 200 else { throw RemoteLoaderError.status(response.statusCode) }
        do {
            return try JSONDecoder().decode(Body.self, from: data)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            // JSONDecoder says only "not valid JSON": the scanner says why (not UTF-8, too deep).
            throw RemoteLoaderError.invalidData(JSONScanner.refusal(of: Array(data)) ?? "the body is not JSON")
        } catch let error as DecodingError {
            throw RemoteLoaderError.invalidData(reason(error))
        } catch {
            throw RemoteLoaderError.invalidData("\(error)")
        }
    }

    /// Where and how the body breaks the contract: `expected an array at "genres"`, `missing "id"
    /// at "items[2]"`, `the body is not JSON`.
    public static func reason(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(let type, let context):
            return "expected \(describe(type)) at \(place(context.codingPath))"
        case .valueNotFound(let type, let context):
            return "expected \(describe(type)) at \(place(context.codingPath)), found null"
        case .keyNotFound(let key, let context):
            return "missing \"\(key.stringValue)\" at \(place(context.codingPath))"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "the body is not JSON" : "an invalid value at \(place(context.codingPath))"
        @unknown default:
            return "\(error)"
        }
    }

    private static func place(_ path: [any CodingKey]) -> String {
        guard !path.isEmpty else { return "the top level" }
        var text = ""
        for key in path {
            if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
        }
        return "\"\(text)\""
    }

    private static func describe(_ type: Any.Type) -> String {
        let name = "\(type)"
        if name.hasPrefix("Array<") { return "an array" }
        if name.hasPrefix("Dictionary<") { return "an object" }
        switch name {
        case "String": return "a string"
        case "Int", "Double", "Float", "Int64", "UInt64": return "a number"
        case "Bool": return "true or false"
        case "URL": return "a URL"
        default: return "an object"
        }
    }
}
