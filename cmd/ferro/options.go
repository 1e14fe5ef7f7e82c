package main

import "time"

// seconds is an option given in whole seconds, as Ironic's are.
func seconds(n int) time.Duration { return time.Duration(n) * time.Second }
