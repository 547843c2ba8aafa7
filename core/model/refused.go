package model

// refusedArchitectures names the architectures that Parse recognises but
// refuses, each with what the simulator lacks to model it faithfully (the
// error says it instead of the generic list of supported families).
var refusedArchitectures = map[string]string{}
