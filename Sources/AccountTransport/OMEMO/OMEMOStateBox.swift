import NIOConcurrencyHelpers
import OMEMOState

/// An account's OMEMO state held in memory (``OMEMOStateKeeper/inMemory(_:)``).
final class OMEMOStateBox: Sendable {
    private let value: NIOLockedValueBox<OMEMOAccountState?>

    init(_ initial: OMEMOAccountState?) {
        self.value = NIOLockedValueBox(initial)
    }

    var state: OMEMOAccountState? { self.value.withLockedValue { $0 } }

    func apply(_ changes: [OMEMOStateChange]) {
        self.value.withLockedValue { state in
            for change in changes {
                if case .created(let keys) = change {
                    state = OMEMOAccountState(keys: keys)
                } else {
                    state?.apply([change])
                }
            }
        }
    }
}
