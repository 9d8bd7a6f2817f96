import FeedAPI
import FeedAPIURLSession
import Testing

/// The HTTPClients the package ships; every spec runs against each.
enum Client: CaseIterable, Sendable, CustomTestStringConvertible {
    case urlSession

    /// A new client of this kind with the given limits.
    func make(maxBodySize: Int = URLSessionHTTPClient.defaultMaxBodySize, timeout: Duration? = nil) -> any HTTPClient {
        switch self {
        case .urlSession: URLSessionHTTPClient(maxBodySize: maxBodySize, timeout: timeout)
        }
    }

    var testDescription: String {
        switch self {
        case .urlSession: "URLSession"
        }
    }
}
