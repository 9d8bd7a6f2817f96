#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request as received by ``LoopbackHTTPServer``.
public struct HTTPRequest: Sendable, Equatable {
    /// The request method, for example `GET`.
    public let method: String
    /// The raw request target as sent on the request line, for example `/search?q=love`.
    public let target: String
    /// Header fields in the order received. Names keep the client's spelling.
    public let headers: [HTTPHeader]
    /// The request body (empty unless the client sent `Content-Length`).
    public let body: Data

    /// Creates a request value (the server builds these; tests may build their own).
    public init(method: String, target: String, headers: [HTTPHeader] = [], body: Data = Data()) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    /// The target without its query string, for example `/search`.
    public var path: String {
        String(target.prefix { $0 != "?" })
    }

    /// The raw query string after `?`, or `nil` when the target has none.
    public var query: String? {
        guard let mark = target.firstIndex(of: "?") else { return nil }
        return String(target[target.index(after: mark)...])
    }

    /// The percent-decoded value of the first query item called `name`, or `nil`.
    public func queryValue(_ name: String) -> String? {
        guard let query else { return nil }
        var components = URLComponents()
        components.percentEncodedQuery = query
        return components.queryItems?.first { $0.name == name }?.value
    }

    /// The value of the first header called `name` (compared case-insensitively), or `nil`.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// One header field. Its name and value are the bytes on the wire read as ISO-8859-1 (each byte
/// one character, U+0000 to U+00FF), as HTTP defines header bytes: a value holding any byte (an
/// ETag of `"\u{FF}\u{FE}"`) is sent and received exactly. A value with a character past U+00FF
/// is sent as UTF-8.
public struct HTTPHeader: Sendable, Equatable {
    /// The field name.
    public var name: String
    /// The field value.
    public var value: String

    /// Creates a header field.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// What ``LoopbackHTTPServer`` does with a request: reply (possibly after a delay), or hang up.
public struct HTTPResponse: Sendable {
    /// How the server ends the exchange.
    public enum Behavior: Sendable, Equatable {
        /// Write the status line, headers and body, then close the connection.
        case reply
        /// Close the connection without writing anything, to simulate a server that dies mid-request.
        case closeConnection
    }

    /// The status code, for example `200`. Any value 100...999 is written as given.
    public var status: Int
    /// Extra header fields. `Content-Length` and `Connection: close` are added by the server.
    public var headers: [HTTPHeader]
    /// The body bytes.
    public var body: Data
    /// How long the server waits before answering. ``LoopbackHTTPServer/stop()`` cuts it short,
    /// so a long delay never holds up shutdown.
    public var delay: Duration
    /// When `false`, no `Content-Length` is sent and the body is delimited by closing the
    /// connection, so a client cannot know the size in advance (tests of streaming size limits).
    public var sendsContentLength: Bool
    /// Whether to reply or hang up.
    public var behavior: Behavior

    /// Creates a response.
    public init(
        status: Int,
        headers: [HTTPHeader] = [],
        body: Data = Data(),
        delay: Duration = .zero,
        sendsContentLength: Bool = true
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
        self.sendsContentLength = sendsContentLength
        self.behavior = .reply
    }

    /// A `200 OK` with a JSON body.
    public static func json(_ body: Data, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [HTTPHeader("Content-Type", "application/json")], body: body)
    }

    /// A `200 OK` with a UTF-8 JSON body given as text.
    public static func json(_ text: String, status: Int = 200) -> HTTPResponse {
        json(Data(text.utf8), status: status)
    }

    /// A response with the given status and no body.
    public static func status(_ code: Int) -> HTTPResponse {
        HTTPResponse(status: code)
    }

    /// `404 Not Found` with no body.
    public static var notFound: HTTPResponse { HTTPResponse(status: 404) }

    /// Accept the request, then close the connection without answering.
    public static var closeConnection: HTTPResponse {
        var response = HTTPResponse(status: 0)
        response.behavior = .closeConnection
        return response
    }

    /// This response, answered only after `delay`.
    public func delayed(by delay: Duration) -> HTTPResponse {
        var copy = self
        copy.delay = delay
        return copy
    }

    /// The bytes of the status line and headers, ending with the blank line.
    func head() -> Data {
        var lines = ["HTTP/1.1 \(status) \(Self.reasonPhrase(status))"]
        for header in headers where !Self.isManagedByServer(header.name) {
            lines.append("\(header.name): \(header.value)")
        }
        if sendsContentLength {
            lines.append("Content-Length: \(body.count)")
        }
        // One request per connection keeps the server trivially correct; clients reconnect.
        lines.append("Connection: close")
        return Data(HeaderText.bytes(lines.joined(separator: "\r\n") + "\r\n\r\n"))
    }

    /// Framing headers come from the server so that they always match what is written.
    private static func isManagedByServer(_ name: String) -> Bool {
        ["content-length", "connection", "transfer-encoding"].contains(name.lowercased())
    }

    private static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}

/// Header text and its bytes, byte for byte as ISO-8859-1.
enum HeaderText {
    /// `text` as ISO-8859-1 when every character is in it, else as UTF-8.
    static func bytes(_ text: String) -> [UInt8] {
        let scalars = text.unicodeScalars
        guard scalars.allSatisfy({ $0.value <= 0xFF }) else { return Array(text.utf8) }
        return scalars.map { UInt8(truncatingIfNeeded: $0.value) }
    }

    /// Each byte as the character of the same number.
    static func text<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: bytes.lazy.map { Unicode.Scalar($0) })
        return String(scalars)
    }
}
