"""A graph on 16:9 slides: laid out to fit 1920x1080 with text no smaller than a reader can
see from the back of a room, folded by layer and split over slides when it does not fit."""
