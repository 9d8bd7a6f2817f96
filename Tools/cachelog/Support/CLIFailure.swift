import ArgumentParser
import CacheLogKit

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
        } catch let error as NoUsableDataError {
            Terminal.message("cachelog: \(error)")
            throw ExitCode(Exit.noUsableData)
        } catch let error as NoMoreResultsError {
            Terminal.message("cachelog: \(error)")
            throw ExitCode(Exit.noUsableData)
        } catch let error as CacheLogError {
            Terminal.message("cachelog: \(error)")
            // Busy is not broken: a script may try again, which it must not do for corruption.
            if case .overlappedWrites = error { throw ExitCode(Exit.busy) }
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
