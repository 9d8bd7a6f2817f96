import ArgumentParser
import CacheLogKit

/// The payload contracts `load --contract` takes: the package's own (``BuiltInContract``), each
/// with its app's defaults.
typealias Contract = BuiltInContract

extension BuiltInContract: CaseArgument {
    /// The defaults table `load --help` and the README show; empty in a run that shows no help.
    ///
    /// ArgumentParser reads each command's configuration at every start, `load`'s too, and the
    /// table reads every contract's defaults, whose search contracts are generic types the
    /// runtime checks (`callgrind` of `cachelog state`: four scans of every conformance record,
    /// 3 % of its instructions). It is built from plain strings: `perf record` showed 2 % of the
    /// process in Foundation's `padding(toLength:)` (through NSString), and 2 % in instantiating
    /// the generic types of a dictionary literal and `joined`.
    static let defaultsTable: String = {
        guard HelpLayout.showsHelp else { return "" }
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
