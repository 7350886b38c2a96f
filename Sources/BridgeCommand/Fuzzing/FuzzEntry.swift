#if FUZZING
import Bridge
import Foundation

/// The target this fuzzing process exercises: `XMPP_BRIDGE_FUZZ=xml|jid|dns|scram|config|socket`.
private let fuzzTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["XMPP_BRIDGE_FUZZ"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        fatalError("set XMPP_BRIDGE_FUZZ to one of \(FuzzTarget.allCases.map(\.rawValue))")
    }
    return target
}()

/// libFuzzer's entry point for one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzTarget.run(UnsafeBufferPointer(start: data, count: size))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// The executable's entry point in a fuzzing build: SwiftPM links an executable target's
/// `main` as `BridgeCommand_main`, so this hands the command line to libFuzzer's driver.
@_cdecl("BridgeCommand_main")
public func fuzzingMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in fuzzTestOneInput(data, size) }
}
#endif
