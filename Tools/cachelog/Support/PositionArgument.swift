import ArgumentParser
import CacheLog

/// A `--from`, `--to`, `--as-of` or `--before` value: a sequence number or an ISO 8601 date.
struct PositionArgument: ExpressibleByArgument, Sendable {
    let position: LogPosition

    init?(argument: String) {
        if let seq = UInt64(argument) {
            position = .seq(seq)
        } else if let date = DateParsing.date(argument) {
            position = .date(date)
        } else {
            return nil
        }
    }
}
