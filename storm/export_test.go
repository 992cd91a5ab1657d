package storm

// Deal is deal, for the schedule's tests.
var Deal = deal
