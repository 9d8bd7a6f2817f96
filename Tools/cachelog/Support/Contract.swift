import ArgumentParser
import CacheLogKit

/// The payload contracts `load --contract` takes: the package's own (``BuiltInContract``), each
/// with its app's defaults.
typealias Contract = BuiltInContract

extension BuiltInContract: CaseArgument {
    /// The defaults table `load --help` and the README show.
    ///
    /// Every run builds it (ArgumentParser reads each command's configuration at start), so it
    /// is built from plain strings: `perf record` of `cachelog state` showed 2 % of the process
    /// in Foundation's `padding(toLength:)` (through NSString), and 2 % in instantiating the
    /// generic types of a dictionary literal and `joined`.
    static let defaultsTable: String = {
        func padded(_ text: String, to width: Int) -> String {
            text + String(repeating: " ", count: max(0, width - text.count))
        }
        var table = ""
        for contract in allCases {
            let defaults = contract.defaults
            if !table.isEmpty { table += "\n" }
            table += "  " + padded(contract.rawValue, to: 8) + padded(contract.app, to: 16)
                + padded(defaults.maxAge.description, to: 5) + padded(defaults.strategy.rawValue, to: 14) + String(defaults.retries)
        }
        return table
    }()
}

extension CacheStrategy: CaseArgument {}
