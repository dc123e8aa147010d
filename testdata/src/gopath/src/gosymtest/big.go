package main

import (
	"gosymtest/leaf"
	"gosymtest/mid"
)

// big is a large function: a 211-case switch with inlined calls in many
// cases. It was generated once; edit freely.
func big(x int) int {
	y := x + seed
	switch x {
	case 0:
		y = y*3 + 0
	case 1:
		y = leaf.Mix(y + 1)
	case 2:
		y = chain(y) - 2
	case 3:
		if y > 6 {
			y -= 3
		} else {
			y += mid.Step(3)
		}
	case 4:
		y = (y << 5) ^ 68
	case 5:
		y = leaf.Fold(y) + leaf.Mix(5)
	case 6:
		sink = y
		y = y % 7
	case 7:
		y = y*10 + 7
	case 8:
		y = leaf.Mix(y + 8)
	case 9:
		y = chain(y) - 9
	case 10:
		if y > 20 {
			y -= 10
		} else {
			y += mid.Step(10)
		}
	case 11:
		y = (y << 2) ^ 187
	case 12:
		y = leaf.Fold(y) + leaf.Mix(12)
	case 13:
		sink = y
		y = y % 14
	case 14:
		y = y*17 + 14
	case 15:
		y = leaf.Mix(y + 15)
	case 16:
		y = chain(y) - 16
	case 17:
		if y > 34 {
			y -= 17
		} else {
			y += mid.Step(17)
		}
	case 18:
		y = (y << 4) ^ 306
	case 19:
		y = leaf.Fold(y) + leaf.Mix(19)
	case 20:
		sink = y
		y = y % 21
	case 21:
		y = y*24 + 21
	case 22:
		y = leaf.Mix(y + 22)
	case 23:
		y = chain(y) - 23
	case 24:
		if y > 48 {
			y -= 24
		} else {
			y += mid.Step(24)
		}
	case 25:
		y = (y << 1) ^ 425
	case 26:
		y = leaf.Fold(y) + leaf.Mix(26)
	case 27:
		sink = y
		y = y % 28
	case 28:
		y = y*31 + 28
	case 29:
		y = leaf.Mix(y + 29)
	case 30:
		y = chain(y) - 30
	case 31:
		if y > 62 {
			y -= 31
		} else {
			y += mid.Step(31)
		}
	case 32:
		y = (y << 3) ^ 544
	case 33:
		y = leaf.Fold(y) + leaf.Mix(33)
	case 34:
		sink = y
		y = y % 35
	case 35:
		y = y*38 + 35
	case 36:
		y = leaf.Mix(y + 36)
	case 37:
		y = chain(y) - 37
	case 38:
		if y > 76 {
			y -= 38
		} else {
			y += mid.Step(38)
		}
	case 39:
		y = (y << 5) ^ 663
	case 40:
		y = leaf.Fold(y) + leaf.Mix(40)
	case 41:
		sink = y
		y = y % 42
	case 42:
		y = y*45 + 42
	case 43:
		y = leaf.Mix(y + 43)
	case 44:
		y = chain(y) - 44
	case 45:
		if y > 90 {
			y -= 45
		} else {
			y += mid.Step(45)
		}
	case 46:
		y = (y << 2) ^ 782
	case 47:
		y = leaf.Fold(y) + leaf.Mix(47)
	case 48:
		sink = y
		y = y % 49
	case 49:
		y = y*52 + 49
	case 50:
		y = leaf.Mix(y + 50)
	case 51:
		y = chain(y) - 51
	case 52:
		if y > 104 {
			y -= 52
		} else {
			y += mid.Step(52)
		}
	case 53:
		y = (y << 4) ^ 901
	case 54:
		y = leaf.Fold(y) + leaf.Mix(54)
	case 55:
		sink = y
		y = y % 56
	case 56:
		y = y*59 + 56
	case 57:
		y = leaf.Mix(y + 57)
	case 58:
		y = chain(y) - 58
	case 59:
		if y > 118 {
			y -= 59
		} else {
			y += mid.Step(59)
		}
	case 60:
		y = (y << 1) ^ 1020
	case 61:
		y = leaf.Fold(y) + leaf.Mix(61)
	case 62:
		sink = y
		y = y % 63
	case 63:
		y = y*66 + 63
	case 64:
		y = leaf.Mix(y + 64)
	case 65:
		y = chain(y) - 65
	case 66:
		if y > 132 {
			y -= 66
		} else {
			y += mid.Step(66)
		}
	case 67:
		y = (y << 3) ^ 1139
	case 68:
		y = leaf.Fold(y) + leaf.Mix(68)
	case 69:
		sink = y
		y = y % 70
	case 70:
		y = y*73 + 70
	case 71:
		y = leaf.Mix(y + 71)
	case 72:
		y = chain(y) - 72
	case 73:
		if y > 146 {
			y -= 73
		} else {
			y += mid.Step(73)
		}
	case 74:
		y = (y << 5) ^ 1258
	case 75:
		y = leaf.Fold(y) + leaf.Mix(75)
	case 76:
		sink = y
		y = y % 77
	case 77:
		y = y*80 + 77
	case 78:
		y = leaf.Mix(y + 78)
	case 79:
		y = chain(y) - 79
	case 80:
		if y > 160 {
			y -= 80
		} else {
			y += mid.Step(80)
		}
	case 81:
		y = (y << 2) ^ 1377
	case 82:
		y = leaf.Fold(y) + leaf.Mix(82)
	case 83:
		sink = y
		y = y % 84
	case 84:
		y = y*87 + 84
	case 85:
		y = leaf.Mix(y + 85)
	case 86:
		y = chain(y) - 86
	case 87:
		if y > 174 {
			y -= 87
		} else {
			y += mid.Step(87)
		}
	case 88:
		y = (y << 4) ^ 1496
	case 89:
		y = leaf.Fold(y) + leaf.Mix(89)
	case 90:
		sink = y
		y = y % 91
	case 91:
		y = y*94 + 91
	case 92:
		y = leaf.Mix(y + 92)
	case 93:
		y = chain(y) - 93
	case 94:
		if y > 188 {
			y -= 94
		} else {
			y += mid.Step(94)
		}
	case 95:
		y = (y << 1) ^ 1615
	case 96:
		y = leaf.Fold(y) + leaf.Mix(96)
	case 97:
		sink = y
		y = y % 98
	case 98:
		y = y*101 + 98
	case 99:
		y = leaf.Mix(y + 99)
	case 100:
		y = chain(y) - 100
	case 101:
		if y > 202 {
			y -= 101
		} else {
			y += mid.Step(101)
		}
	case 102:
		y = (y << 3) ^ 1734
	case 103:
		y = leaf.Fold(y) + leaf.Mix(103)
	case 104:
		sink = y
		y = y % 105
	case 105:
		y = y*108 + 105
	case 106:
		y = leaf.Mix(y + 106)
	case 107:
		y = chain(y) - 107
	case 108:
		if y > 216 {
			y -= 108
		} else {
			y += mid.Step(108)
		}
	case 109:
		y = (y << 5) ^ 1853
	case 110:
		y = leaf.Fold(y) + leaf.Mix(110)
	case 111:
		sink = y
		y = y % 112
	case 112:
		y = y*115 + 112
	case 113:
		y = leaf.Mix(y + 113)
	case 114:
		y = chain(y) - 114
	case 115:
		if y > 230 {
			y -= 115
		} else {
			y += mid.Step(115)
		}
	case 116:
		y = (y << 2) ^ 1972
	case 117:
		y = leaf.Fold(y) + leaf.Mix(117)
	case 118:
		sink = y
		y = y % 119
	case 119:
		y = y*122 + 119
	case 120:
		y = leaf.Mix(y + 120)
	case 121:
		y = chain(y) - 121
	case 122:
		if y > 244 {
			y -= 122
		} else {
			y += mid.Step(122)
		}
	case 123:
		y = (y << 4) ^ 2091
	case 124:
		y = leaf.Fold(y) + leaf.Mix(124)
	case 125:
		sink = y
		y = y % 126
	case 126:
		y = y*129 + 126
	case 127:
		y = leaf.Mix(y + 127)
	case 128:
		y = chain(y) - 128
	case 129:
		if y > 258 {
			y -= 129
		} else {
			y += mid.Step(129)
		}
	case 130:
		y = (y << 1) ^ 2210
	case 131:
		y = leaf.Fold(y) + leaf.Mix(131)
	case 132:
		sink = y
		y = y % 133
	case 133:
		y = y*136 + 133
	case 134:
		y = leaf.Mix(y + 134)
	case 135:
		y = chain(y) - 135
	case 136:
		if y > 272 {
			y -= 136
		} else {
			y += mid.Step(136)
		}
	case 137:
		y = (y << 3) ^ 2329
	case 138:
		y = leaf.Fold(y) + leaf.Mix(138)
	case 139:
		sink = y
		y = y % 140
	case 140:
		y = y*143 + 140
	case 141:
		y = leaf.Mix(y + 141)
	case 142:
		y = chain(y) - 142
	case 143:
		if y > 286 {
			y -= 143
		} else {
			y += mid.Step(143)
		}
	case 144:
		y = (y << 5) ^ 2448
	case 145:
		y = leaf.Fold(y) + leaf.Mix(145)
	case 146:
		sink = y
		y = y % 147
	case 147:
		y = y*150 + 147
	case 148:
		y = leaf.Mix(y + 148)
	case 149:
		y = chain(y) - 149
	case 150:
		if y > 300 {
			y -= 150
		} else {
			y += mid.Step(150)
		}
	case 151:
		y = (y << 2) ^ 2567
	case 152:
		y = leaf.Fold(y) + leaf.Mix(152)
	case 153:
		sink = y
		y = y % 154
	case 154:
		y = y*157 + 154
	case 155:
		y = leaf.Mix(y + 155)
	case 156:
		y = chain(y) - 156
	case 157:
		if y > 314 {
			y -= 157
		} else {
			y += mid.Step(157)
		}
	case 158:
		y = (y << 4) ^ 2686
	case 159:
		y = leaf.Fold(y) + leaf.Mix(159)
	case 160:
		sink = y
		y = y % 161
	case 161:
		y = y*164 + 161
	case 162:
		y = leaf.Mix(y + 162)
	case 163:
		y = chain(y) - 163
	case 164:
		if y > 328 {
			y -= 164
		} else {
			y += mid.Step(164)
		}
	case 165:
		y = (y << 1) ^ 2805
	case 166:
		y = leaf.Fold(y) + leaf.Mix(166)
	case 167:
		sink = y
		y = y % 168
	case 168:
		y = y*171 + 168
	case 169:
		y = leaf.Mix(y + 169)
	case 170:
		y = chain(y) - 170
	case 171:
		if y > 342 {
			y -= 171
		} else {
			y += mid.Step(171)
		}
	case 172:
		y = (y << 3) ^ 2924
	case 173:
		y = leaf.Fold(y) + leaf.Mix(173)
	case 174:
		sink = y
		y = y % 175
	case 175:
		y = y*178 + 175
	case 176:
		y = leaf.Mix(y + 176)
	case 177:
		y = chain(y) - 177
	case 178:
		if y > 356 {
			y -= 178
		} else {
			y += mid.Step(178)
		}
	case 179:
		y = (y << 5) ^ 3043
	case 180:
		y = leaf.Fold(y) + leaf.Mix(180)
	case 181:
		sink = y
		y = y % 182
	case 182:
		y = y*185 + 182
	case 183:
		y = leaf.Mix(y + 183)
	case 184:
		y = chain(y) - 184
	case 185:
		if y > 370 {
			y -= 185
		} else {
			y += mid.Step(185)
		}
	case 186:
		y = (y << 2) ^ 3162
	case 187:
		y = leaf.Fold(y) + leaf.Mix(187)
	case 188:
		sink = y
		y = y % 189
	case 189:
		y = y*192 + 189
	case 190:
		y = leaf.Mix(y + 190)
	case 191:
		y = chain(y) - 191
	case 192:
		if y > 384 {
			y -= 192
		} else {
			y += mid.Step(192)
		}
	case 193:
		y = (y << 4) ^ 3281
	case 194:
		y = leaf.Fold(y) + leaf.Mix(194)
	case 195:
		sink = y
		y = y % 196
	case 196:
		y = y*199 + 196
	case 197:
		y = leaf.Mix(y + 197)
	case 198:
		y = chain(y) - 198
	case 199:
		if y > 398 {
			y -= 199
		} else {
			y += mid.Step(199)
		}
	case 200:
		y = (y << 1) ^ 3400
	case 201:
		y = leaf.Fold(y) + leaf.Mix(201)
	case 202:
		sink = y
		y = y % 203
	case 203:
		y = y*206 + 203
	case 204:
		y = leaf.Mix(y + 204)
	case 205:
		y = chain(y) - 205
	case 206:
		if y > 412 {
			y -= 206
		} else {
			y += mid.Step(206)
		}
	case 207:
		y = (y << 3) ^ 3519
	case 208:
		y = leaf.Fold(y) + leaf.Mix(208)
	case 209:
		sink = y
		y = y % 210
	case 210:
		y = y*213 + 210
	default:
		y = -y
	}
	return y
}
