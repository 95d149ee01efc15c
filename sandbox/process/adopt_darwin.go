package process

// BecomeHostSubreaper is a no-op here: there is no child subreaper.
func BecomeHostSubreaper() error { return nil }

// SweepAdopted is a no-op here.
func SweepAdopted() {}
