#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a remote load delivered nothing: no usable response (``connectivity``), or a response that
/// is not valid (``invalidData``), with the reason in words for the person reading the error.
///
/// Errors compare by kind: `error == .invalidData` holds whatever the reason, as the specs say
/// "delivers invalid data on a non-200 response"; the reason is for people, not for matching.
public struct RemoteLoaderError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The two ways a remote load fails, which callers tell apart (only invalid data is retried).
    public enum Kind: Sendable, Equatable {
        /// The request failed in transport (no server, lost connection, timeout, TLS failure,
        /// unsupported URL), or the client could not make it.
        case connectivity
        /// A response arrived but is not valid: a status other than 200, a body that does not
        /// match the contract, or a body over the client's size limit.
        case invalidData
    }

    /// Which of the two failures it is; what errors compare by.
    public let kind: Kind
    /// What was wrong: `HTTP status 404, not 200`, `the body is not JSON`,
    /// `expected an array at "genres"`; for a connectivity error, what failed instead of reaching
    /// the remote, as it reads after "remote" (`certificate not trusted: …`); nil when nothing
    /// more is known.
    public let reason: String?
    /// The error that caused this one, when there was one: for a connectivity error, what the
    /// ``HTTPClient`` threw (an ``HTTPClientError`` such as ``HTTPClientError/unavailable(_:)``,
    /// which a tool may want to report even when a cache serves). Not compared.
    public let cause: (any Error)?

    /// An error of `kind`, with the `reason` in words when one is known, and its `cause`.
    public init(_ kind: Kind, reason: String? = nil, cause: (any Error)? = nil) {
        self.kind = kind
        self.reason = reason
        self.cause = cause
    }

    /// Whether no request could be made because the HTTP client cannot run on this machine
    /// (``HTTPClientError/unavailable(_:)``: libcurl is missing or broken). A cache that serves
    /// then hides a broken installation, which a tool should say.
    public var isClientUnavailable: Bool {
        if case HTTPClientError.unavailable? = cause { return true }
        return false
    }

    /// Whether the client refused a redirect (from https down to plain http, or to another
    /// scheme): someone sent the request where the user did not ask it to go, which a tool
    /// should say even when a cache serves.
    public var isRefusedRedirect: Bool {
        if case HTTPClientError.redirectRefused? = cause { return true }
        return false
    }

    /// Whether the remote's TLS certificate was refused (not trusted, expired, not yet valid):
    /// a server that is not the one asked for, or one that must be fixed, which a tool should say
    /// even when a cache serves.
    public var isRefusedCertificate: Bool {
        guard case HTTPClientError.transport(let code, _)? = cause else { return false }
        return [.serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateHasBadDate, .serverCertificateNotYetValid].contains(code)
    }

    /// No usable response arrived.
    public static let connectivity = RemoteLoaderError(.connectivity)
    /// A response arrived but is not valid, for no reason given.
    public static let invalidData = RemoteLoaderError(.invalidData)

    /// A response that is not valid, and why.
    public static func invalidData(_ reason: String) -> RemoteLoaderError { RemoteLoaderError(.invalidData, reason: reason) }

    /// A response whose status is not 200.
    public static func status(_ code: Int) -> RemoteLoaderError { .invalidData("HTTP status \(code), not 200") }

    /// Same kind, whatever the reason.
    public static func == (a: RemoteLoaderError, b: RemoteLoaderError) -> Bool { a.kind == b.kind }

    /// `remote unreachable` (or `remote` and what failed instead, such as `remote certificate not
    /// trusted: …`), or `remote sent invalid data` and the reason when there is one.
    public var description: String {
        switch kind {
        case .connectivity: "remote " + (reason ?? "unreachable")
        case .invalidData: reason.map { "remote sent invalid data: \($0)" } ?? "remote sent invalid data"
        }
    }
}

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do): the sentence, not
// "The operation could not be completed."
extension RemoteLoaderError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
