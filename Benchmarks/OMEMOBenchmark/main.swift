// The OMEMO device's own cost per message (issue 41), no sockets: two devices in one
// process, a session between them, then N messages one way, each sealed by one device
// (encrypt + the <encrypted/> element), read back from XML and opened by the other (parse
// + decrypt), and the key changes taken as the daemon takes them. Prints µs per message
// for each step, the median of ROUNDS rounds.
// Usage: swift build -c release --product omemo-benchmark && .build/release/omemo-benchmark [N] [ROUNDS]
import Foundation
import OMEMO
import OMEMOState
import XMPP

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 2000 : 2000
let rounds = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 5 : 5

func microseconds(_ duration: Duration, per n: Int) -> Double {
    let (seconds, attoseconds) = duration.components
    return (Double(seconds) * 1e6 + Double(attoseconds) / 1e12) / Double(n)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

let now = Date()
let phone = try OMEMODevice.create(jid: "bob@example.org", now: now)
let bridge = try OMEMODevice.create(jid: "home@example.org", now: now)
let phoneAddress = OMEMOAddress(jid: phone.jid, device: phone.deviceID)
let bridgeAddress = OMEMOAddress(jid: bridge.jid, device: bridge.deviceID)
// The session as in the daemon: the bridge starts it, the phone answers, so the phone's
// messages are normal ones (no prekey).
try bridge.startSession(with: phoneAddress, bundle: try phone.bundle)
_ = try phone.decrypt(try bridge.encrypt(Array("hello".utf8), for: [phoneAddress]), from: bridge.jid)
_ = try bridge.decrypt(try phone.encrypt(nil, for: [bridgeAddress]), from: phone.jid)
_ = phone.takeChanges()
_ = bridge.takeChanges()

let clock = ContinuousClock()
var columns: [String: [Double]] = [:]
for round in 0..<rounds {
    let bodies = (0..<count).map { Array("r\(round) reply number \($0) from the phone".utf8) }
    var sealed: [OMEMOEncrypted] = []
    sealed.reserveCapacity(count)
    var elements: [XMLElement] = []
    let encrypt = clock.measure {
        for body in bodies { sealed.append(try! phone.encrypt(body, for: [bridgeAddress])) }
    }
    _ = phone.takeChanges()
    let build = clock.measure {
        for message in sealed { elements.append(message.element) }
    }
    var parsed: [OMEMOEncrypted] = []
    parsed.reserveCapacity(count)
    let parse = clock.measure {
        for element in elements { parsed.append(try! OMEMOEncrypted(element: element)) }
    }
    let decrypt = clock.measure {
        for message in parsed { _ = try! bridge.decrypt(message, from: phone.jid) }
    }
    let take = clock.measure { _ = bridge.takeChanges() }
    columns["encrypt", default: []].append(microseconds(encrypt, per: count))
    columns["element", default: []].append(microseconds(build, per: count))
    columns["parse", default: []].append(microseconds(parse, per: count))
    columns["decrypt", default: []].append(microseconds(decrypt, per: count))
    columns["take changes", default: []].append(microseconds(take, per: count))
}
print("OMEMO device, \(count) messages × \(rounds) rounds (median µs per message)")
print("| step | µs |")
print("| --- | --- |")
for step in ["encrypt", "element", "parse", "decrypt", "take changes"] {
    print(String(format: "| %@ | %.2f |", step, median(columns[step]!)))
}
