#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an ``HTTPClient`` received besides the body: the URL that answered (after redirects), the
/// status code and the header fields.
///
/// A plain value, so that a mapper (`(Data, HTTPResponse) throws -> T`) and a test build one
/// without a networking library: on Linux, `HTTPURLResponse` lives in FoundationNetworking, which
/// brings libcurl and its dependencies into every program that imports it.
public struct HTTPResponse: Sendable, Equatable {
    /// The URL of the response: the requested one, or where the redirects led.
    public let url: URL
    /// The HTTP status code, such as 200 or 304.
    public let statusCode: Int
    /// The header fields as the server named them; a field sent more than once holds its values
    /// joined with `, `. Look one up with ``value(forHTTPHeaderField:)``, which ignores case.
    public let headerFields: [String: String]

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - url: The URL that answered.
    ///   - statusCode: The HTTP status code.
    ///   - headerFields: The header fields, by name (any case).
    public init(url: URL, statusCode: Int, headerFields: [String: String] = [:]) {
        self.url = url
        self.statusCode = statusCode
        self.headerFields = headerFields
    }

    /// The value of the header field `name`, compared without regard to case (HTTP field names are
    /// case-insensitive); nil when the server did not send it.
    public func value(forHTTPHeaderField name: String) -> String? {
        if let value = headerFields[name] { return value }
        let wanted = name.lowercased()
        return headerFields.first { $0.key.lowercased() == wanted }?.value
    }
}
