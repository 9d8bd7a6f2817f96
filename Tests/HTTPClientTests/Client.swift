import FeedAPI
import FeedAPIURLSession
import Testing

/// The HTTPClients the package ships; every spec runs against each.
enum Client: CaseIterable, Sendable, CustomTestStringConvertible {
    case curl
    case urlSession

    /// A new client of this kind with the given limits.
    func make(maxBodySize: Int = CurlHTTPClient.defaultMaxBodySize, timeout: Duration? = nil) -> any HTTPClient {
        switch self {
        case .curl: CurlHTTPClient(userAgent: "cachelog-tests/1", maxBodySize: maxBodySize, timeout: timeout)
        case .urlSession: URLSessionHTTPClient(maxBodySize: maxBodySize, timeout: timeout)
        }
    }

    var testDescription: String {
        switch self {
        case .curl: "curl"
        case .urlSession: "URLSession"
        }
    }
}
