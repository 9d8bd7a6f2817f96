extension HTTPClientError {
    /// What failed in transport, numbered as Foundation's `URLError.Code` numbers it (a URLSession
    /// client passes its code's `rawValue` on). FeedAPI's own type rather than `URLError.Code`:
    /// on Linux that lives in the whole of Foundation, which a program of FeedAPI need not link.
    public struct TransportCode: RawRepresentable, Hashable, Sendable {
        /// The number `URLError.Code` gives the same failure.
        public let rawValue: Int

        /// The code numbered `rawValue`, as `URLError.Code(rawValue:)` would name it.
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }

        /// A failure none of the others names.
        public static let unknown = Self(rawValue: -1)
        /// The request was cancelled.
        public static let cancelled = Self(rawValue: -999)
        /// The URL is malformed.
        public static let badURL = Self(rawValue: -1000)
        /// No complete response came within the timeout.
        public static let timedOut = Self(rawValue: -1001)
        /// The URL's scheme is not one the client speaks.
        public static let unsupportedURL = Self(rawValue: -1002)
        /// The host's name did not resolve.
        public static let cannotFindHost = Self(rawValue: -1003)
        /// Nothing accepted the connection.
        public static let cannotConnectToHost = Self(rawValue: -1004)
        /// The connection broke off during the transfer.
        public static let networkConnectionLost = Self(rawValue: -1005)
        /// Redirects went on past the client's limit.
        public static let httpTooManyRedirects = Self(rawValue: -1007)
        /// The proxy wants credentials (HTTP 407; URLError's `userAuthenticationRequired`).
        public static let userAuthenticationRequired = Self(rawValue: -1013)
        /// The server's reply was no HTTP response, or none at all.
        public static let badServerResponse = Self(rawValue: -1011)
        /// The body's content encoding could not be decoded.
        public static let cannotDecodeContentData = Self(rawValue: -1016)
        /// The TLS handshake failed.
        public static let secureConnectionFailed = Self(rawValue: -1200)
        /// The server's certificate has expired.
        public static let serverCertificateHasBadDate = Self(rawValue: -1201)
        /// The server's certificate did not verify (its chain or the name it is for).
        public static let serverCertificateUntrusted = Self(rawValue: -1202)
        /// The server's certificate chains to a root that is not trusted.
        public static let serverCertificateHasUnknownRoot = Self(rawValue: -1203)
        /// The server's certificate is not valid yet.
        public static let serverCertificateNotYetValid = Self(rawValue: -1204)
        /// The server rejected the client's certificate.
        public static let clientCertificateRejected = Self(rawValue: -1205)
        /// The server asked for a client certificate.
        public static let clientCertificateRequired = Self(rawValue: -1206)
    }
}
