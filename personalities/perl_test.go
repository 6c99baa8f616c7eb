package personalities

func perlScenarios() []inprocScenario { return nil }
