import ArgumentParser
import CacheLog
import FeedAPI
import FeedCache
import Foundation

/// The exit codes, as `--help` and the README document them.
enum Exit {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    /// Neither the remote nor the cache had usable data.
    static let noUsableData: Int32 = 3
    /// Bad command line (ArgumentParser's validation errors use the same code).
    static let usage: Int32 = 64
}

/// An error the CLI reports as one line on stderr, then exits with `code`.
struct CLIFailure: Error {
    let message: String
    let code: Int32

    init(_ message: String, code: Int32 = Exit.failure) {
        self.message = message
        self.code = code
    }
}

extension ParsableCommand {
    /// Runs `body`, turning every error into one line on stderr and the documented exit code:
    /// never a stack trace.
    static func reportingFailures(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let failure as CLIFailure {
            Terminal.message("cachelog: \(failure.message)")
            throw ExitCode(failure.code)
        } catch let error as CacheLogError {
            Terminal.message("cachelog: \(error)")
            throw ExitCode(Exit.failure)
        } catch let error as ValidationError {
            throw error
        } catch let error as ExitCode {
            throw error
        } catch {
            Terminal.message("cachelog: \(error)")
            throw ExitCode(Exit.failure)
        }
    }
}

/// One line for each way a remote load fails.
func describeRemote(_ error: any Error) -> String {
    switch error {
    case let error as RemoteLoaderError: return error.description
    default: return "remote failed (\(error))"
    }
}

/// One line for each way the cache has nothing usable.
func describeCache(_ error: any Error, now: Date) -> String {
    switch error {
    case CacheUnavailableError.empty:
        return "no cache"
    case CacheUnavailableError.expired(let timestamp, let maxAge):
        return "cache expired (cached \(DateParsing.string(timestamp)), \(DurationText.string(now.timeIntervalSince(timestamp))) old, max age \(maxAge))"
    case let error as CacheLogError:
        return "cache unreadable (\(error))"
    case let error as InvalidCachedFeedError:
        return "cache unreadable (\(error))"
    default:
        return "cache failed (\(error))"
    }
}

/// Why saving into the cache failed, in the words of the layer that failed.
func describeSave(_ error: any Error) -> String {
    switch error {
    case let error as CacheLogError: return "\(error)"
    case let error as CLIFailure: return error.message
    default: return "\(error)"
    }
}
